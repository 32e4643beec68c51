/**
 * Step 1 shared by the elastic allocators: every job gets its minimum shape (≥ 1 PS + 1 worker,
 * paper §4.1: no starvation) in order of arrival, while the pool holds it.
 */
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds } from '../core/remaining-time';
import { bundle, fits, subtract } from '../core/resource-vector';
import { shapeWords } from '../words';

/** A job's shape while an allocator grows it. */
export interface GrowState {
  readonly job: PreparedJob;
  /** Tie-break: position of the job in id order (deterministic). */
  readonly rank: number;
  ps: number;
  workers: number;
  /** Remaining seconds at (ps, workers). */
  time: number;
}

/** Oldest first, then by id. Jobs are already in id order, so a stable sort keeps it. */
export function byArrival(jobs: readonly PreparedJob[]): PreparedJob[] {
  return [...jobs].sort((a, b) => a.snapshot.arrivalTime - b.snapshot.arrivalTime);
}

export function minimumShapes(
  jobs: readonly PreparedJob[],
  pool: Float64Array,
): { states: GrowState[]; waiting: Map<string, string> } {
  const rank = new Map(jobs.map((j, i) => [j.id, i]));
  const states: GrowState[] = [];
  const waiting = new Map<string, string>();
  for (const job of byArrival(jobs)) {
    if (!Number.isFinite(job.psShare) || !Number.isFinite(job.workerShare)) {
      waiting.set(job.id, 'needs a resource that no server offers');
      continue;
    }
    const need = bundle(job.ps, job.minPs, job.worker, job.minWorkers);
    if (!fits(pool, need)) {
      waiting.set(
        job.id,
        `minimum shape ${shapeWords(job.minPs, job.minWorkers)} does not fit the free resources`,
      );
      continue;
    }
    subtract(pool, need);
    const time = remainingSeconds(job, job.minPs, job.minWorkers);
    states.push({ job, rank: rank.get(job.id) ?? 0, ps: job.minPs, workers: job.minWorkers, time });
  }
  return { states, waiting };
}
