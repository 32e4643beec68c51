/**
 * FIFO and SRTF baselines: every job runs at one fixed shape, never resized.
 *
 * The fixed shape is the job's minimum shape (minPs, minWorkers — at least 1 + 1) unless
 * `fixedShape` is given, which is clamped to the job's [min, max]. A user who submits a rigid job
 * sets min = max = the shape they request, so the minimum shape is the requested shape.
 *
 * - FIFO (first in, first out): arrival order; strict — a job that does not fit blocks every
 *   later job (head-of-line blocking, the classic FIFO batch queue behaviour).
 * - SRTF (shortest remaining time first, Schrage 1968): ascending remaining time at the fixed
 *   shape (our estimate), preemptive (recomputed every round), skipping jobs that do not fit.
 */
import type { Allocation, AllocationRequest, Allocator } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds } from '../core/remaining-time';
import { bundle, fits, subtract } from '../core/resource-vector';
import type { JobShape } from '../types';
import { byArrival } from './minimum-shapes';
import { shapeWords } from '../words';

export interface FixedShapeOptions {
  /** The shape every job asks for (clamped per job); default: each job's minimum shape. */
  readonly fixedShape?: JobShape;
}

export function fixedShapeAllocator(
  options: FixedShapeOptions & { readonly order: 'fifo' | 'srtf' },
): Allocator {
  return {
    name: options.order,
    allocate({ input, jobs }: AllocationRequest): Allocation {
      const pool = Float64Array.from(input.total);
      const shapeOf = (j: PreparedJob) => fixedShape(j, options.fixedShape);
      const ordered = options.order === 'fifo' ? byArrival(jobs) : bySrtf(jobs, shapeOf);
      const shapes = new Map<string, JobShape>();
      const waiting = new Map<string, string>();
      let blockedBy: string | null = null;
      for (const job of ordered) {
        if (blockedBy !== null) {
          waiting.set(job.id, `queued behind ${blockedBy} (FIFO)`);
          continue;
        }
        const shape = shapeOf(job);
        const need = bundle(job.ps, shape.ps, job.worker, shape.workers);
        if (Number.isFinite(job.psShare + job.workerShare) && fits(pool, need)) {
          subtract(pool, need);
          shapes.set(job.id, shape);
          continue;
        }
        waiting.set(job.id, `fixed shape ${shapeWords(shape.ps, shape.workers)} does not fit`);
        if (options.order === 'fifo') blockedBy = job.id;
      }
      return { shapes, waiting, order: ordered.map((j) => j.id) };
    },
  };
}

export function fixedShape(job: PreparedJob, wanted: JobShape | undefined): JobShape {
  if (!wanted) return { ps: job.minPs, workers: job.minWorkers };
  return {
    ps: Math.min(job.maxPs, Math.max(job.minPs, wanted.ps)),
    workers: Math.min(job.maxWorkers, Math.max(job.minWorkers, wanted.workers)),
  };
}

function bySrtf(jobs: readonly PreparedJob[], shapeOf: (j: PreparedJob) => JobShape): PreparedJob[] {
  const time = new Map(
    jobs.map((j) => {
      const s = shapeOf(j);
      return [j.id, remainingSeconds(j, s.ps, s.workers)] as const;
    }),
  );
  // Stable sort over id order: equal times keep id order.
  return [...jobs].sort((a, b) => {
    const ta = time.get(a.id) ?? 0;
    const tb = time.get(b.id) ?? 0;
    return ta === tb ? 0 : ta < tb ? -1 : 1;
  });
}
