/**
 * The Jobs table of the dashboard: one row per job with its state, shape, progress, predicted
 * completion, restarts, queue position and, for a job that waits, the reason in words — naming
 * the resource that is short. Times are job seconds (the clock every screen shows). Pure.
 */
import type { Resources } from '../../../shared/src/units';
import type { JobView } from '../runtime/api-schemas';
import type { JobRecord } from '../runtime/job-record';
import type { JobState } from '../runtime/job-state';
import type { ApiPhase } from '../runtime/rollout/in-flight';
import { plural } from '../scheduling/words';
import type { JobShape } from '../scheduling/types';
import { saysDoesNotFit, shortageInWords } from './shortage';

export interface Interval {
  readonly value: number;
  readonly lower: number;
  readonly upper: number;
}

export interface JobRow {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly mode: 'sync' | 'async';
  readonly phase: ApiPhase;
  /** The phase as observed: `resizing` while a rollout changes the job's shape. */
  readonly state: JobState;
  readonly shape: JobShape | null;
  /** Fraction 0..1 of the predicted total steps; null until the convergence model is fitted. */
  readonly progress: number | null;
  readonly stepsDone: number;
  /** Wall ms of the predicted completion, with its interval. */
  readonly predictedCompletion: Interval | null;
  readonly predictedRemainingSec: Interval | null;
  readonly restarts: number;
  /** 1-based rank among the jobs that hold nothing (pending or waiting), oldest submission first. */
  readonly queuePosition: number | null;
  /** Why the job does not run (or what its pre-run does), in words; null while it simply runs. */
  readonly waiting: string | null;
  readonly jct: number | null;
  /** Job seconds at submission and at completion. */
  readonly submittedAt: number;
  readonly finishedAt: number | null;
}

/** What the servers have free now, to name the resource a waiting job is short of. */
export interface FreeCapacity {
  readonly free: ReadonlyMap<string, Readonly<Record<string, number>>>;
  readonly capacity: Resources;
}

export interface Overview {
  /** Wall ms when this was computed. */
  readonly now: number;
  /** Job seconds since the runtime's origin (the first start of this state). */
  readonly elapsedSec: number;
  /** Job seconds per wall second (local mode's --time-scale; 1 in a cluster). */
  readonly timeScale: number;
  /** Jobs by state. */
  readonly counts: Readonly<Record<string, number>>;
  readonly jobs: readonly JobRow[];
}

/** Same rule as the Kubernetes status: a percentage needs a converged fit; a finished job is at 100 %. */
export function progressOf(v: JobView): number | null {
  if (v.phase === 'done') return 1;
  const c = v.models?.convergence;
  if (!v.models || c?.status !== 'ok') return null;
  const done = v.observations.stepsDone;
  const total = done + v.models.remaining.steps;
  return total > 0 ? Math.min(1, done / total) : null;
}

const holdsNothing = (v: JobView): boolean =>
  (v.phase === 'pending' || v.phase === 'waiting') && v.shape === null;

/** Queue positions: jobs that hold nothing, by submission time (then id, for a stable order). */
export function queuePositions(views: readonly JobView[]): Map<string, number> {
  const queued = views
    .filter(holdsNothing)
    .sort((a, b) => a.submittedAt - b.submittedAt || a.id.localeCompare(b.id));
  return new Map(queued.map((v, i) => [v.id, i + 1]));
}

/** What a job waits for (or does before it is scheduled), in words; `cluster` names what is short. */
export function waitingInWords(
  v: JobView,
  rec: JobRecord | undefined,
  cluster?: FreeCapacity,
): string | null {
  if (v.state === 'resizing') return rolloutInWords(rec);
  const words = reasonInWords(v, rec);
  if (!words || !cluster || !rec || v.shape !== null || !saysDoesNotFit(v.reason)) return words;
  return `${words}: ${shortageInWords(rec.spec, cluster.free, cluster.capacity)}`;
}

/** A rollout in flight: a job that never ran starts its tasks; one that ran restarts them. */
const rolloutInWords = (rec: JobRecord | undefined): string =>
  rec && rec.spans.length === 0 ? 'starting its tasks' : 'restarting at a new shape (checkpoint → restart)';

function reasonInWords(v: JobView, rec: JobRecord | undefined): string | null {
  switch (v.phase) {
    case 'pending':
      return v.reason ?? 'submitted; its pre-run starts at the next round';
    case 'pre-run': {
      const pre = rec?.preRun;
      const at = v.shape ? ` at ${shapeText(v.shape)}` : '';
      return pre
        ? `pre-run: measuring speed, sample ${Math.min(pre.done + 1, pre.shapes.length)} of ${pre.shapes.length}${at}`
        : `pre-run: measuring speed${at}`;
    }
    case 'waiting':
      return v.reason ?? 'waiting for the scheduler to give it resources';
    case 'running':
      return v.shape === null ? rolloutInWords(rec) : null;
    case 'resizing':
      return rolloutInWords(rec);
    case 'done':
    case 'failed':
      return null;
  }
}

export const shapeText = (s: JobShape): string =>
  `${plural(s.ps, 'PS', 'PS')} × ${plural(s.workers, 'worker')}`;

export function jobRows(
  views: readonly JobView[],
  records: readonly JobRecord[],
  cluster?: FreeCapacity,
): JobRow[] {
  const positions = queuePositions(views);
  const recs = new Map(records.map((r) => [`${r.spec.namespace}/${r.spec.name}`, r]));
  return views.map((v) => ({
    id: v.id,
    name: v.name,
    namespace: v.namespace,
    mode: v.mode,
    phase: v.phase,
    state: v.state ?? v.phase,
    shape: v.shape,
    progress: progressOf(v),
    stepsDone: v.observations.stepsDone,
    predictedCompletion: v.plan.predictedCompletionTs,
    predictedRemainingSec: v.plan.predictedRemainingSec,
    restarts: v.restarts,
    queuePosition: positions.get(v.id) ?? null,
    waiting: waitingInWords(v, recs.get(v.id), cluster),
    jct: v.jct,
    submittedAt: v.submittedAt,
    finishedAt: v.finishedAt ?? null,
  }));
}

export function overview(
  views: readonly JobView[],
  records: readonly JobRecord[],
  clock: { now(): number; wallMs(): number; readonly scale: number },
  cluster?: FreeCapacity,
): Overview {
  const counts: Record<string, number> = {};
  for (const v of views) {
    const state = v.state ?? v.phase;
    counts[state] = (counts[state] ?? 0) + 1;
  }
  return {
    now: clock.wallMs(),
    elapsedSec: Math.round(clock.now() * 10) / 10,
    timeScale: clock.scale,
    counts,
    jobs: jobRows(views, records, cluster),
  };
}
