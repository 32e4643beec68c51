/**
 * What the runtime knows about one job beyond its observations: phase, shape history,
 * restarts. This is the part that is persisted as a document (observations are replayed).
 */
import type { JobShape, TaskPlacement } from '../scheduling/types';
import type { JobSpec } from './job-spec';
import type { ShapeSpan } from './observations';

export const JOB_PHASES = ['pending', 'pre-run', 'running', 'waiting', 'done', 'failed'] as const;
export type JobPhase = (typeof JOB_PHASES)[number];

export interface JobRecord {
  readonly spec: JobSpec;
  /** Job seconds (runtime clock) at submission and at completion. */
  readonly submittedAt: number;
  finishedAt: number | null;
  phase: JobPhase;
  /** Why the job waits, when it does. */
  reason: string | null;
  /** What runs now; null when nothing of the job runs. */
  current: { shape: JobShape; placement: TaskPlacement[] } | null;
  /** Checkpoint → restart cycles (resizes, including pre-run shape changes). */
  restarts: number;
  spans: ShapeSpan[];
  /** Pre-run: the sample shapes and how many have been run. */
  preRun: { shapes: JobShape[]; done: number } | null;
}

export function newJobRecord(spec: JobSpec, now: number): JobRecord {
  return {
    spec,
    submittedAt: now,
    finishedAt: null,
    phase: 'pending',
    reason: null,
    current: null,
    restarts: 0,
    spans: [],
    preRun: null,
  };
}

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
