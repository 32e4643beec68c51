/**
 * Shrink protection (beyond the paper): a running job is not made slower when its loss exceeds
 * what the jobs that would take its resources can gain.
 *
 * Whoever takes a running job's resources would get them anyway once the job finishes, i.e.
 * within its remaining time at its current shape, t_cur. So a job that is kept as it is delays
 * any one other job by at most t_cur. Running slower costs the job itself t_new + pause − t_cur
 * (it restarts, then finishes later). When that loss is at least t_cur, keeping the job is no
 * worse for the average JCT, whatever the others would have done with the resources. Typical
 * case: a job 20 s from its end shrunk to admit a newcomer (30 s pause + a slower finish) —
 * the newcomer would have waited 20 s.
 *
 * The bound is per beneficiary; when several jobs would share the freed resources their total
 * gain can be larger. The rule only compares the two sides for ONE job at a time, on purpose: it
 * needs nothing but the job's own predictions, so it stays cheap and cannot oscillate.
 */
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds } from '../core/remaining-time';
import { bundle, fits, subtract } from '../core/resource-vector';
import type { GrowState } from './minimum-shapes';

/** Ids of the running jobs whose tentative shape loses more than it can give (see above). */
export function notWorthSlowingDown(states: readonly GrowState[]): Set<string> {
  const keep = new Set<string>();
  for (const s of states) {
    const current = s.job.snapshot.current?.shape;
    if (!current || !withinBounds(s.job, current)) continue;
    if (current.ps === s.ps && current.workers === s.workers) continue;
    const atCurrent = remainingSeconds(s.job, current.ps, current.workers);
    const atNew = remainingSeconds(s.job, s.ps, s.workers);
    if (!Number.isFinite(atCurrent)) continue;
    const loss = atNew + s.job.restartSec - atCurrent;
    if (loss > 0 && loss >= atCurrent) keep.add(s.job.id);
  }
  return keep;
}

/**
 * Reserves the current shape of each job in `ids` from `pool`, in id order, while the pool
 * holds it; returns their states. Jobs that no longer fit are left out (they compete as usual).
 */
export function reserveCurrentShapes(
  jobs: readonly PreparedJob[],
  ids: ReadonlySet<string>,
  pool: Float64Array,
): GrowState[] {
  const kept: GrowState[] = [];
  jobs.forEach((job, rank) => {
    const current = job.snapshot.current?.shape;
    if (!ids.has(job.id) || !current) return;
    const need = bundle(job.ps, current.ps, job.worker, current.workers);
    if (!fits(pool, need)) return;
    subtract(pool, need);
    const time = remainingSeconds(job, current.ps, current.workers);
    kept.push({ job, rank, ps: current.ps, workers: current.workers, time });
  });
  return kept;
}

export function withinBounds(job: PreparedJob, shape: { ps: number; workers: number }): boolean {
  return (
    shape.ps >= job.minPs &&
    shape.ps <= job.maxPs &&
    shape.workers >= job.minWorkers &&
    shape.workers <= job.maxWorkers
  );
}
