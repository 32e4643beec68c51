/**
 * Last resort of the Optimus placer, beyond the paper: when neither an even split nor the
 * role-packed fallback can hold a job's allocated shape (the allocator sized it against the
 * cluster's totals, but its workers need GPU servers whose room other jobs took), take away one
 * task at a time — the one whose removal costs the least remaining time per unit of its dominant
 * share, the reverse of the marginal-gain order — until the job fits. The job waits only if even
 * its minimum shape cannot be placed. Making a job wait for want of its last few tasks wastes far
 * more than running it a little smaller (paper §4.1: every job gets at least its minimum).
 */
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds, saving } from '../core/remaining-time';
import type { JobShape } from '../types';
import type { ServerCount } from './server-count';
import { packByRole } from './pack-by-role';
import type { ServerIndex } from './server-index';

const MIN_SHARE = 1e-12;

/** The next smaller shape: the task whose loss per dominant share is least; null at the minimum. */
export function shrinkOnce(job: PreparedJob, shape: JobShape): JobShape | null {
  const now = remainingSeconds(job, shape.ps, shape.workers);
  const options: { shape: JobShape; loss: number }[] = [];
  if (shape.workers > job.minWorkers) {
    const next = { ps: shape.ps, workers: shape.workers - 1 };
    const loss = saving(remainingSeconds(job, next.ps, next.workers), now);
    options.push({ shape: next, loss: loss / Math.max(job.workerShare, MIN_SHARE) });
  }
  if (shape.ps > job.minPs) {
    const next = { ps: shape.ps - 1, workers: shape.workers };
    const loss = saving(remainingSeconds(job, next.ps, next.workers), now);
    options.push({ shape: next, loss: loss / Math.max(job.psShare, MIN_SHARE) });
  }
  // Ties (and NaN-free equal losses) drop a worker first: a worker holds the scarcer GPU.
  options.sort((a, b) => a.loss - b.loss);
  return options[0]?.shape ?? null;
}

/** The largest shape reachable by `shrinkOnce` that `packByRole` can place, with its counts. */
export function shrinkToFit(
  index: ServerIndex,
  job: PreparedJob,
  shape: JobShape,
  scanLimit: number,
): { shape: JobShape; counts: ServerCount[] } | null {
  for (let s = shrinkOnce(job, shape); s; s = shrinkOnce(job, s)) {
    const counts = packByRole(index, job, s, scanLimit);
    if (counts) return { shape: s, counts };
  }
  return null;
}
