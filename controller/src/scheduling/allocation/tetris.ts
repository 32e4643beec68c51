/**
 * Tetris baseline — Grandl et al., "Multi-Resource Packing for Cluster Schedulers", SIGCOMM 2014.
 * Tetris scores a (task, machine) pair by the alignment — the dot product — of the task's demand
 * and the machine's free resources, and adds a shortest-remaining-time term so that jobs with
 * less work left go first. Here that is split into parts: this allocator orders jobs by remaining
 * time (our estimate at the job's 1:1 minimum shape; smaller total demand breaks ties) and, in
 * that order, gives each job its minimum shape and then 1:1 pairs while they fit the aggregate
 * pool — the job's target; `placement/tetris-packing.ts` places the pairs on the servers by the
 * weighted score, and a job runs at what its pairs reached (`placement/alignment.ts`, the earlier
 * placer kept as `tetris-gang`, placed the target whole or made the job wait).
 *
 * The Optimus paper's evaluation (§6.1) ran Tetris with a 1:1 PS:worker ratio and gave it
 * Optimus's own estimates. A packer that has those estimates does not hand a job tasks they say
 * will not make it faster — they would only take room from the next job in line — so a job stops
 * growing at the first pair the estimate says cannot shorten its time (`untilNoSpeedUp`, default
 * true). With `speedUp: 'optimistic'` (Tetris's default) "cannot" means even the upper end of the
 * estimate's interval at the larger shape is no faster than the current point: a job whose speed
 * model is not fitted yet (a flat guess) keeps growing, so online jobs are not stuck at 1 + 1
 * (measured on DL2's traces: 24% and 5.4% of the GPUs allocated). `speedUp: 'point'` compares the
 * point estimates (`tetris-gang`'s rule); `untilNoSpeedUp: false` grows every job 1:1 to its
 * maximum whatever the prediction.
 */
import type { Allocation, AllocationRequest, Allocator } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds } from '../core/remaining-time';
import { bundle, fits, subtract } from '../core/resource-vector';
import type { JobShape } from '../types';
import { firstPairs, lastPairs, pairShape } from './pairs';
import { shapeWords } from '../words';

export interface TetrisOptions {
  /** Stop growing a job when one more pair would not shorten its predicted time (default true). */
  readonly untilNoSpeedUp?: boolean;
  /** m in Tetris's ε = m·ā/p̄, the weight of remaining time against packing (default 1). */
  readonly srtfWeight?: number;
  /**
   * Whether a pair speeds the job up (with `untilNoSpeedUp`): 'point' estimates; 'unless-flat'
   * (default) the same, except that a model predicting one speed at both shapes (nothing fitted
   * yet) lets the job grow; 'optimistic': the upper end of the interval at the larger shape beats
   * the point at the smaller.
   */
  readonly speedUp?: 'point' | 'unless-flat' | 'optimistic';
}

export function tetrisAllocator(options: TetrisOptions = {}): Allocator {
  const untilNoSpeedUp = options.untilNoSpeedUp ?? true;
  const faster = SPEED_UP[options.speedUp ?? 'unless-flat'];
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
          if (untilNoSpeedUp && !faster(job, shape, to)) break;
          subtract(pool, delta);
          shape = to;
          shapes.set(job.id, to);
        }
      }
      return { shapes, waiting, order: ordered.map((j) => j.id) };
    },
  };
}

function fasterAt(job: PreparedJob, from: JobShape, to: JobShape): boolean {
  return remainingSeconds(job, to.ps, to.workers) < remainingSeconds(job, from.ps, from.workers);
}

/** The upper end of the speed interval at `to` beats the point speed at `from`. */
function mayBeFasterAt(job: PreparedJob, from: JobShape, to: JobShape): boolean {
  if (job.steps <= 0) return false;
  return job.speed.predict(to.ps, to.workers).upper > job.speed.predict(from.ps, from.workers).stepsPerSec;
}

/** Faster by the point estimates, or no information: the same speed predicted at both shapes. */
function fasterUnlessFlat(job: PreparedJob, from: JobShape, to: JobShape): boolean {
  if (job.steps <= 0) return false;
  const a = job.speed.predict(from.ps, from.workers).stepsPerSec;
  const b = job.speed.predict(to.ps, to.workers).stepsPerSec;
  return b > a || (b === a && Number.isFinite(a) && a > 0);
}

const SPEED_UP = {
  point: fasterAt,
  'unless-flat': fasterUnlessFlat,
  optimistic: mayBeFasterAt,
} as const;

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
