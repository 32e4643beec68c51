/**
 * A job's target (ADR 0035): what the job should run, written by the round before anything moves
 * and kept with the job's record — durable in every backend (local: the store; Kubernetes: the
 * OptimusJob's `status.target`; the simulator: the same record) — so a controller that restarts
 * reads it back and goes on. The backend's executor steps toward it; the observation says how far.
 * Pure.
 */
import type { PlanAction } from '../../planning/types';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import type { ObservedJob } from '../observed';
import type { CurrentJob } from '../core';
import type { JobEnd } from '../job-end';

export interface TargetTask extends TaskPlacement {
  /**
   * The generation the task must have been started for. A resize starts every task anew (a new
   * generation for all); a replaced worker is the only new one; the others keep theirs.
   */
  readonly generation: number;
}

export interface JobTarget {
  /** Monotonic per job: every target written for the job takes the next one. */
  readonly generation: number;
  /** What the job should run; none: it should hold nothing (suspended, finished, given up). */
  readonly tasks: readonly TargetTask[];
  /** Stopping saves a checkpoint first (SIGTERM with the grace); false: the program already ended. */
  readonly checkpoint: boolean;
  /** A finish: the end to record before anything of the job stops (so it is never started again). */
  readonly end?: JobEnd;
  /** Why the job should hold nothing (a suspend, a rollout given up), for statuses and the API. */
  readonly reason?: string;
  /**
   * Set on the target the runtime writes when it gives a rollout up (what is safe to keep of what
   * runs): why. Reaching it does not heal the job; the next full round re-plans it.
   */
  readonly givenUp?: string;
  /** True when reaching it stops a set that ran and starts one from its checkpoint (a restart). */
  readonly restart: boolean;
  /** The decision was taken on fitted models (the new shape's span counts as a fitted choice). */
  readonly fitted: boolean;
  /** Wall ms the round wrote it, and by when it must be reached before the runtime re-plans. */
  readonly sinceMs: number;
  readonly deadlineMs: number;
  /** Wall ms of the observation that first showed it reached; absent while it is in flight. */
  readonly reachedAtMs?: number;
}

export const shapeOf = (t: { readonly tasks: readonly TaskPlacement[] }): JobShape | null => {
  let ps = 0;
  let workers = 0;
  for (const x of t.tasks)
    if (x.role === 'ps') ps += 1;
    else workers += 1;
  return ps > 0 && workers > 0 ? { ps, workers } : null;
};

/** The target as what the job will hold (the policy's view of it). */
export const heldSet = (t: JobTarget): CurrentJob | null => {
  const shape = shapeOf(t);
  return shape
    ? { shape, placement: t.tasks.map(({ role, index, server }) => ({ role, index, server })) }
    : null;
};

const sameTask = (a: TaskPlacement, b: TaskPlacement): boolean => a.role === b.role && a.index === b.index;

export interface TargetTime {
  readonly wallMs: number;
  /** Wall ms a target may take before the runtime gives up on it. */
  readonly timeoutMs: number;
}

/**
 * The target a job's actions ask for (one plan gives a job one action, or several worker
 * replacements), at `generation`. `current` is what the job runs now, each task at its generation:
 * a replaced worker's siblings keep theirs, so only the replacement restarts.
 */
export function targetOf(
  actions: readonly PlanAction[],
  o: {
    readonly generation: number;
    readonly current: readonly TargetTask[];
    readonly hasRun: boolean;
    readonly fitted: boolean;
    readonly time: TargetTime;
  },
): JobTarget {
  const { generation } = o;
  let t: JobTarget = {
    generation,
    tasks: o.current,
    checkpoint: true,
    restart: false,
    fitted: o.fitted,
    sinceMs: o.time.wallMs,
    deadlineMs: o.time.wallMs + o.time.timeoutMs,
  };
  for (const a of actions) t = applyAction(t, a, o.hasRun);
  return t;
}

function applyAction(t: JobTarget, a: PlanAction, hasRun: boolean): JobTarget {
  const { generation } = t;
  switch (a.kind) {
    case 'start':
    case 'resize':
      return {
        ...t,
        tasks: a.placement.map((p) => ({ role: p.role, index: p.index, server: p.server, generation })),
        // A resize always restarts; a start does when it resumes a job that ran before (checkpoint).
        restart: a.kind === 'resize' || hasRun,
      };
    case 'suspend':
      return { ...t, tasks: [], reason: a.reason };
    case 'finish':
      return {
        ...t,
        tasks: [],
        checkpoint: a.checkpoint,
        end: { outcome: a.outcome, reason: a.reason, message: a.message },
      };
    case 'replace-worker':
      return {
        ...t,
        tasks: t.tasks.map((x) =>
          x.role === 'worker' && x.index === a.index ? { ...x, server: a.server, generation } : x,
        ),
      };
  }
}

/** What a job runs now, each task at the generation it runs at (unknown: its last target's, or 0). */
export function currentTasks(observed: ObservedJob | undefined, previous: JobTarget | null): TargetTask[] {
  return (observed?.tasks ?? [])
    .filter((t) => t.state === 'running' || t.state === 'pending')
    .map((t) => ({
      role: t.role,
      index: t.index,
      server: t.server,
      generation: t.generation ?? previous?.tasks.find((p) => sameTask(p, t))?.generation ?? 0,
    }));
}

/**
 * What is safe to keep of an observation once a rollout is given up: a whole set that runs (every
 * PS and worker index from 0, all running, nothing failed) stays as it is; anything less goes.
 */
export function holdingTarget(
  previous: JobTarget,
  observed: ObservedJob | undefined,
  o: { readonly reason: string; readonly time: TargetTime },
): JobTarget {
  const live = (observed?.tasks ?? []).filter((t) => t.state !== 'succeeded');
  // A job being finished keeps nothing, whatever runs.
  const whole =
    previous.end === undefined &&
    live.length > 0 &&
    live.every((t) => t.state === 'running') &&
    isWholeSet(live) &&
    shapeOf({ tasks: live });
  const generation = previous.generation + 1;
  return {
    generation,
    tasks: whole
      ? live.map((t) => ({
          role: t.role,
          index: t.index,
          server: t.server,
          generation: t.generation ?? previous.tasks.find((p) => sameTask(p, t))?.generation ?? 0,
        }))
      : [],
    checkpoint: previous.checkpoint,
    ...(previous.end ? { end: previous.end } : {}),
    ...(whole ? {} : { reason: o.reason }),
    givenUp: o.reason,
    restart: false,
    fitted: previous.fitted,
    sinceMs: o.time.wallMs,
    deadlineMs: o.time.wallMs + o.time.timeoutMs,
  };
}

/** Every role's indexes are 0..n-1, each once (a set with a hole trains nothing: ps-lite is static). */
function isWholeSet(tasks: readonly TaskPlacement[]): boolean {
  for (const role of ['ps', 'worker'] as const) {
    const ix = tasks.filter((t) => t.role === role).map((t) => t.index);
    const set = new Set(ix);
    if (set.size !== ix.length) return false;
    for (let i = 0; i < ix.length; i++) if (!set.has(i)) return false;
  }
  return true;
}

/** A short description of an action, for logs and events. */
export function describeAction(a: PlanAction): string {
  switch (a.kind) {
    case 'start':
    case 'resize':
      return `${a.kind} ${a.jobId} ${a.shape.ps}x${a.shape.workers}`;
    case 'finish':
      return `finish ${a.jobId} (${a.reason})`;
    default:
      return `${a.kind} ${a.jobId}`;
  }
}
