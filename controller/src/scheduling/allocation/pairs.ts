/**
 * The 1:1 PS:worker shapes of the baselines (as in the paper's evaluation): n pairs, each side
 * clamped to the job's [min, max]. Growing n past one side's max keeps growing the other side.
 */
import type { PreparedJob } from '../core/prepare';
import type { JobShape } from '../types';

export function pairShape(job: PreparedJob, n: number): JobShape {
  return {
    ps: Math.min(job.maxPs, Math.max(job.minPs, n)),
    workers: Math.min(job.maxWorkers, Math.max(job.minWorkers, n)),
  };
}

/** The smallest n whose pair shape is the job's minimum shape. */
export function firstPairs(job: PreparedJob): number {
  return Math.max(job.minPs, job.minWorkers);
}

/** The n past which the pair shape no longer grows. */
export function lastPairs(job: PreparedJob): number {
  return Math.max(job.maxPs, job.maxWorkers);
}
