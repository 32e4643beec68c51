/**
 * DRF baseline — Dominant Resource Fairness, Ghodsi et al., "Dominant Resource Fairness: Fair
 * Allocation of Multiple Resource Types", NSDI 2011, progressive filling: repeatedly give the next
 * unit to the job with the smallest dominant share (its largest share of any resource). As in
 * the Optimus paper's evaluation (§6.1) the unit is one PS + one worker (1:1 ratio) and the
 * allocator is work-conserving: it keeps filling while any job's next pair fits, skipping jobs
 * whose pair does not fit. Each job first gets max(minPs, minWorkers) pairs (each side clamped
 * to its bounds), oldest first.
 */
import { BinaryHeap } from '../core/heap';
import type { Allocation, AllocationRequest, Allocator } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { bundle, dominantShare, fits, subtract } from '../core/resource-vector';
import type { JobShape } from '../types';
import { byArrival } from './minimum-shapes';
import { firstPairs, lastPairs, pairShape } from './pairs';
import { shapeWords } from '../words';

interface Share {
  readonly job: PreparedJob;
  readonly rank: number;
  n: number;
  share: number;
}

export function drfAllocator(): Allocator {
  return {
    name: 'drf',
    allocate({ input, jobs }: AllocationRequest): Allocation {
      const pool = Float64Array.from(input.total);
      const rank = new Map(jobs.map((j, i) => [j.id, i]));
      const shapes = new Map<string, JobShape>();
      const waiting = new Map<string, string>();
      const heap = new BinaryHeap<Share>(
        (a, b) => a.share < b.share || (a.share === b.share && a.rank < b.rank),
      );
      for (const job of byArrival(jobs)) {
        const n = firstPairs(job);
        const shape = pairShape(job, n);
        const need = bundle(job.ps, shape.ps, job.worker, shape.workers);
        if (!Number.isFinite(dominantShare(need, input.total)) || !fits(pool, need)) {
          waiting.set(job.id, `minimum shape ${shapeWords(shape.ps, shape.workers)} does not fit`);
          continue;
        }
        subtract(pool, need);
        shapes.set(job.id, shape);
        heap.push({ job, rank: rank.get(job.id) ?? 0, n, share: dominantShare(need, input.total) });
      }
      for (let s = heap.pop(); s !== undefined; s = heap.pop()) {
        if (s.n >= lastPairs(s.job)) continue;
        const from = pairShape(s.job, s.n);
        const to = pairShape(s.job, s.n + 1);
        const delta = bundle(s.job.ps, to.ps - from.ps, s.job.worker, to.workers - from.workers);
        if (!fits(pool, delta)) continue; // the pool only shrinks: this job is done, others go on
        subtract(pool, delta);
        s.n++;
        shapes.set(s.job.id, to);
        s.share = dominantShare(bundle(s.job.ps, to.ps, s.job.worker, to.workers), input.total);
        heap.push(s);
      }
      return { shapes, waiting };
    },
  };
}
