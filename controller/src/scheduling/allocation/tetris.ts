/**
 * Tetris baseline — Grandl et al., "Multi-Resource Packing for Cluster Schedulers", SIGCOMM 2014.
 * Tetris scores (job, machine) pairs by the alignment of demand and free resources plus a
 * shortest-remaining-time term. Here that is split into parts: this allocator orders jobs by
 * remaining time (our estimate at the job's 1:1 minimum shape; smaller total demand breaks ties)
 * and, in that order, gives each job its minimum shape and then 1:1 pairs up to its maximum while
 * they fit; `placement/alignment.ts` packs tasks by alignment. 1:1 ratio as in the Optimus
 * paper's evaluation (§6.1), which fed Tetris with Optimus's own estimates.
 */
import type { Allocation, AllocationRequest, Allocator } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds } from '../core/remaining-time';
import { bundle, fits, subtract } from '../core/resource-vector';
import type { JobShape } from '../types';
import { firstPairs, lastPairs, pairShape } from './pairs';
import { shapeWords } from '../words';

export function tetrisAllocator(): Allocator {
  return {
    name: 'tetris',
    allocate({ input, jobs }: AllocationRequest): Allocation {
      const pool = Float64Array.from(input.total);
      const shapes = new Map<string, JobShape>();
      const waiting = new Map<string, string>();
      const ordered = shortestFirst(jobs);
      for (const job of ordered) {
        const shape = pairShape(job, firstPairs(job));
        const need = bundle(job.ps, shape.ps, job.worker, shape.workers);
        if (!Number.isFinite(job.psShare + job.workerShare) || !fits(pool, need)) {
          waiting.set(job.id, `minimum shape ${shapeWords(shape.ps, shape.workers)} does not fit`);
          continue;
        }
        subtract(pool, need);
        shapes.set(job.id, shape);
      }
      for (const job of ordered) {
        let shape = shapes.get(job.id);
        for (let n = firstPairs(job); shape && n < lastPairs(job); n++) {
          const to = pairShape(job, n + 1);
          const delta = bundle(job.ps, to.ps - shape.ps, job.worker, to.workers - shape.workers);
          if (!fits(pool, delta)) break;
          subtract(pool, delta);
          shape = to;
          shapes.set(job.id, to);
        }
      }
      return { shapes, waiting };
    },
  };
}

/** Shortest remaining time at the minimum 1:1 shape first; then smaller demand; then id. */
export function shortestFirst(jobs: readonly PreparedJob[]): PreparedJob[] {
  const key = new Map(
    jobs.map((j) => {
      const s = pairShape(j, firstPairs(j));
      return [
        j.id,
        [remainingSeconds(j, s.ps, s.workers), s.ps * j.psShare + s.workers * j.workerShare],
      ] as const;
    }),
  );
  return [...jobs].sort((a, b) => {
    const [ta = 0, da = 0] = key.get(a.id) ?? [];
    const [tb = 0, db = 0] = key.get(b.id) ?? [];
    return ta !== tb ? (ta < tb ? -1 : 1) : da - db;
  });
}
