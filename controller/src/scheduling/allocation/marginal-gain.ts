/**
 * Optimus allocation (paper §4.1): the greedy marginal-gain loop.
 *
 * 1. Every job gets its minimum shape (at least 1 PS + 1 worker), oldest first, while it fits.
 * 2. A binary heap holds each job's best next task: the PS or the worker whose addition saves the
 *    most remaining time per unit of that task's dominant resource (its largest share of the
 *    cluster), times the job's priority factor. Pop the best, add the task, recompute only that
 *    job. A task that no longer fits is dropped and the job's other task kind is tried (the loop
 *    does not end at the first misfit); stop when no positive gain fits.
 * 3. Resize cost (beyond the paper, on by default): a running job only changes shape when the
 *    predicted saving over its remaining time exceeds `restartCostSec`; otherwise it keeps its
 *    current shape if the pool allows. Resources freed that way go to jobs that are not running.
 */
import type { Allocation, AllocationRequest, Allocator } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds, saving } from '../core/remaining-time';
import { add, bundle, fits, subtract } from '../core/resource-vector';
import type { JobShape } from '../types';
import { grow } from './grow';
import { minimumShapes, type GrowState } from './minimum-shapes';

export interface MarginalGainOptions {
  /** Apply the resize-cost rule to running jobs (default true). */
  readonly resizeCost?: boolean;
}

/** Builds the Optimus marginal-gain allocator. */
export function marginalGainAllocator(options: MarginalGainOptions = {}): Allocator {
  const resizeCost = options.resizeCost ?? true;
  return {
    name: 'marginal-gain',
    allocate(request: AllocationRequest): Allocation {
      const pool = Float64Array.from(request.input.total);
      const { states, waiting } = minimumShapes(request.jobs, pool);
      grow(states, pool);
      if (resizeCost) {
        keepShapesNotWorthARestart(states, pool, request.input.restartCostSec);
        grow(
          states.filter((s) => s.job.snapshot.current === null),
          pool,
        );
      }
      const shapes = new Map<string, JobShape>();
      for (const s of states) shapes.set(s.job.id, { ps: s.ps, workers: s.workers });
      return { shapes, waiting };
    },
  };
}

/**
 * The resize-cost rule. Reverting a job that grew frees resources, so those go first; reverting
 * a job that shrank needs resources and happens only if they are still free.
 */
function keepShapesNotWorthARestart(states: GrowState[], pool: Float64Array, restartCostSec: number): void {
  const freeing: GrowState[] = [];
  const needing: GrowState[] = [];
  for (const s of states) {
    const current = s.job.snapshot.current?.shape;
    if (!current || !withinBounds(s.job, current)) continue;
    if (current.ps === s.ps && current.workers === s.workers) continue;
    const atCurrent = remainingSeconds(s.job, current.ps, current.workers);
    if (saving(atCurrent, s.time) > restartCostSec) continue; // worth the restart
    (current.ps <= s.ps && current.workers <= s.workers ? freeing : needing).push(s);
  }
  for (const s of [...freeing, ...needing]) {
    const current = s.job.snapshot.current?.shape;
    if (!current) continue;
    const now = bundle(s.job.ps, s.ps, s.job.worker, s.workers);
    const then = bundle(s.job.ps, current.ps, s.job.worker, current.workers);
    add(pool, now);
    if (fits(pool, then)) {
      subtract(pool, then);
      s.ps = current.ps;
      s.workers = current.workers;
      s.time = remainingSeconds(s.job, s.ps, s.workers);
    } else {
      subtract(pool, now);
    }
  }
}

function withinBounds(job: PreparedJob, shape: JobShape): boolean {
  return (
    shape.ps >= job.minPs &&
    shape.ps <= job.maxPs &&
    shape.workers >= job.minWorkers &&
    shape.workers <= job.maxWorkers
  );
}
