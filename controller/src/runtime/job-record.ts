/**
 * What the runtime knows about one job beyond its observations: phase, shape history,
 * restarts. This is the part that is persisted as a document (observations are replayed).
 */
import type { JobShape } from '../scheduling/types';
import type { JobEnd } from './job-end';
import type { JobSpec } from './job-spec';
import type { ShapeSpan } from './observations';
import type { RestartCosts } from './rollout/restart-cost';
import type { JobTarget } from './rollout/target';

export const JOB_PHASES = ['pending', 'pre-run', 'running', 'waiting', 'done', 'failed'] as const;
export type JobPhase = (typeof JOB_PHASES)[number];

export interface JobRecord {
  readonly spec: JobSpec;
  /**
   * Which submission of `namespace/name` this is: a job removed and submitted again under the
   * same name is a new job, and stored records carry this id so the new one never replays the
   * old one's. Absent in documents written before it existed.
   */
  readonly incarnation?: string;
  /** Job seconds (runtime clock) at submission and at completion. */
  readonly submittedAt: number;
  finishedAt: number | null;
  phase: JobPhase;
  /** Why the job waits, when it does. */
  reason: string | null;
  /** How the job ended (phase done or failed), with the reason; null while it is not over. */
  end: JobEnd | null;
  /**
   * Why the runtime cannot schedule the job as it should (its refit, planning or rollout failed);
   * null when healthy. The job keeps its last good models and every other job is scheduled.
   */
  degraded: Degraded | null;
  /** Checkpoint → restart cycles (resizes, including pre-run shape changes). */
  restarts: number;
  spans: ShapeSpan[];
  /** Pre-run: the sample shapes and how many have been run. */
  preRun: PreRunState | null;
  /**
   * What the job should run (ADR 0035): written by the round before anything moves, stepped toward
   * by the backend's executor; null before the job's first decision (or in documents written before
   * targets existed: what runs is then adopted as it is).
   */
  target: JobTarget | null;
  /** The latest rollout's moments and what the job's restarts measured (absent before the first). */
  restartCost?: RestartCosts;
}

/** A job's pre-run: its sample shapes and how many have run. */
export interface PreRunState {
  shapes: JobShape[];
  done: number;
}

/** The stage of a round that failed for one job. */
export type DegradedStage = 'refit' | 'plan' | 'rollout';

export interface Degraded {
  readonly stage: DegradedStage;
  readonly reason: string;
  /** Wall-clock ms since when. */
  readonly sinceMs: number;
}

export function newJobRecord(spec: JobSpec, now: number, incarnation?: string): JobRecord {
  return {
    spec,
    ...(incarnation !== undefined && { incarnation }),
    submittedAt: now,
    finishedAt: null,
    phase: 'pending',
    reason: null,
    end: null,
    degraded: null,
    restarts: 0,
    spans: [],
    preRun: null,
    target: null,
  };
}

/**
 * True when a stored record belongs to this submission of its job. A record without an
 * incarnation (written before it existed, or by a store that does not keep it) is taken as the
 * job's own, as it always was.
 */
export const isOwnRecord = (rec: JobRecord, r: { readonly incarnation?: string | undefined }): boolean =>
  r.incarnation === undefined || r.incarnation === rec.incarnation;

/** Closes the open span (if any) at `wallMs` and opens one for `shape`. */
export function startSpan(rec: JobRecord, shape: JobShape | null, wallMs: number, fitted: boolean): void {
  const open = rec.spans.at(-1);
  if (open && open.until === null) open.until = wallMs;
  if (shape) rec.spans.push({ shape, since: wallMs, until: null, fitted });
}

/** The distinct shapes the job has run at, in order (consecutive repeats collapsed). */
export function shapeHistory(rec: JobRecord): JobShape[] {
  const out: JobShape[] = [];
  for (const s of rec.spans) {
    const last = out.at(-1);
    if (!last || last.ps !== s.shape.ps || last.workers !== s.shape.workers) out.push(s.shape);
  }
  return out;
}

/**
 * A record loaded from a store written by any earlier version: fields added since get their
 * defaults, and what the runtime no longer keeps (a believed `current`) is dropped — what runs
 * is observed every round.
 */
export function normalizeRecord(raw: JobRecord): JobRecord {
  const { current: _dropped, ...rest } = raw as JobRecord & { current?: unknown };
  return { ...rest, end: raw.end ?? null, degraded: raw.degraded ?? null, target: raw.target ?? null };
}
