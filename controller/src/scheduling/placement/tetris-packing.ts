/**
 * Tetris placement (Grandl et al., "Multi-Resource Packing for Cluster Schedulers", SIGCOMM 2014,
 * §3): tasks go where their demand aligns best with a server's free resources, and the next task
 * placed is the one with the best weighted sum of that packing score and a shortest-remaining-time
 * term — here one PS + worker pair, the unit the Optimus paper's evaluation (§6.1) gives Tetris.
 *
 * - Alignment of a task with a server: the dot product of its demand and the server's free
 *   resources, each normalised by the largest server's capacity; a pair's is the sum over its two
 *   tasks, each on its best server.
 * - Remaining-time term p: the job's remaining work — remaining seconds at its placed shape × the
 *   shape's normalised size (resource-seconds, the paper's "remaining work"); less is better.
 * - Score = alignment − ε·p with ε = m·ā/p̄ (ā, p̄: the means over the jobs at the start of the
 *   round; m = `srtfWeight`, 1 by default — the paper's choice, also DL2's Tetris).
 *
 * No gang beyond the first bundle: every job first gets its minimum shape, in the allocator's order
 * (SRTF), placed whole or not at all; then pairs are placed one at a time by score, each job up to
 * its allocated shape, until no pair fits. A job thus runs at whatever its pairs reached (shrink to
 * fit) instead of waiting for a shape sized against the whole pool. A task goes back to the server
 * it runs on when that server still has room, so an unchanged job is not restarted.
 *
 * Choosing the best pair is a lazy greedy: a job's stale score is an upper bound (alignment only
 * falls as servers fill, and p changes only when the job itself grows), so the top of the heap,
 * rescored, is the best when it still beats the next stale score. Scans every server per task:
 * O(pairs × servers), meant for simulator-sized clusters.
 */
import { BinaryHeap } from '../core/heap';
import type { PlacementRequest, PlacementResult, Placer } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { remainingSeconds } from '../core/remaining-time';
import { add, fits, subtract } from '../core/resource-vector';
import { firstPairs, pairShape } from '../allocation/pairs';
import type { JobShape, TaskPlacement, TaskRole } from '../types';
import { TaskListBuilder } from './task-list';

export interface TetrisPackingOptions {
  /** m in ε = m·ā/p̄: the weight of the remaining-time term against packing (default 1). */
  readonly srtfWeight?: number;
}

interface Packed {
  readonly job: PreparedJob;
  /** Position in the allocator's order: breaks ties, so the decision is deterministic. */
  readonly order: number;
  readonly target: JobShape;
  readonly tasks: { role: TaskRole; server: number }[];
  pairs: number;
  shape: JobShape;
  score: number;
}

/** Rescorings in a row after which the best rescored candidate is taken (bounds a round's cost). */
const MAX_RESCORES = 16;

export function tetrisPackingPlacer(options: TetrisPackingOptions = {}): Placer {
  const m = options.srtfWeight ?? 1;
  return {
    name: 'tetris-packing',
    place(request: PlacementRequest): PlacementResult {
      const ctx = new Packing(request);
      const unplaced = new Map<string, string>();
      const admitted: Packed[] = [];
      for (const [i, { job, shape }] of request.jobs.entries()) {
        const p = ctx.admit(job, shape, i);
        if (p) admitted.push(p);
        else unplaced.set(job.id, 'no server has room for its first bundle');
      }
      ctx.grow(admitted, m);
      const placed = new Map<string, readonly TaskPlacement[]>();
      const shrunk = new Map<string, JobShape>();
      for (const p of admitted) {
        placed.set(p.job.id, ctx.placement(p));
        shrunk.set(p.job.id, p.shape);
      }
      return { placed, unplaced, shrunk };
    },
  };
}

class Packing {
  private readonly scale: Float64Array;

  constructor(private readonly request: PlacementRequest) {
    const { input } = request;
    this.scale = new Float64Array(input.space.real);
    for (const s of input.servers)
      for (let r = 0; r < this.scale.length; r++)
        this.scale[r] = Math.max(this.scale[r] ?? 0, s.allocatable[r] ?? 0);
  }

  /** The job's minimum shape, whole, or null. */
  admit(job: PreparedJob, target: JobShape, order: number): Packed | null {
    const pairs = firstPairs(job);
    const shape = pairShape(job, pairs);
    const tasks = this.placeTasks(job, { ps: 0, workers: 0 }, shape);
    return tasks ? { job, order, target, tasks, pairs, shape, score: 0 } : null;
  }

  /** Pairs one at a time, best score first, each job up to its target, until none fits. */
  grow(admitted: readonly Packed[], m: number): void {
    const growing = admitted.filter((p) => this.next(p) !== null);
    if (growing.length === 0) return;
    const a = growing.map((p) => this.alignment(p));
    const w = growing.map((p) => this.remainingWork(p));
    const finite = w.filter(Number.isFinite);
    const pMean = finite.reduce((s, v) => s + v, 0) / Math.max(finite.length, 1);
    const aMean = a.reduce((s, v) => s + v, 0) / a.length;
    const epsilon = pMean > 0 ? (m * aMean) / pMean : 0;
    const score = (p: Packed): number => this.alignment(p) - epsilon * this.remainingWork(p);
    const heap = new BinaryHeap<Packed>(
      (x, y) => x.score > y.score || (x.score === y.score && x.order < y.order),
    );
    growing.forEach((p, i) => {
      p.score = (a[i] ?? 0) - epsilon * (w[i] ?? 0);
      heap.push(p);
    });
    for (;;) {
      const best = this.pickBest(heap, score);
      if (!best) return;
      if (!this.addPair(best)) continue; // the pool only shrinks: this job is done growing
      if (this.next(best) !== null) {
        best.score = score(best);
        heap.push(best);
      }
    }
  }

  placement(p: Packed): TaskPlacement[] {
    const list = new TaskListBuilder();
    for (const t of p.tasks) list.add(t.role, this.request.input.servers[t.server]?.name ?? '');
    return list.build();
  }

  /** Lazy greedy: rescore the top until it still beats the next stale score. */
  private pickBest(heap: BinaryHeap<Packed>, score: (p: Packed) => number): Packed | undefined {
    const rescored: Packed[] = [];
    let best: Packed | undefined;
    for (let i = 0; i < MAX_RESCORES; i++) {
      const top = heap.pop();
      if (!top) break;
      top.score = score(top);
      if (!best || top.score > best.score || (top.score === best.score && top.order < best.order)) {
        if (best) rescored.push(best);
        best = top;
      } else rescored.push(top);
      const next = heap.peek();
      if (!next || best.score > next.score || (best.score === next.score && best.order < next.order)) break;
    }
    for (const p of rescored) heap.push(p);
    return best;
  }

  private next(p: Packed): JobShape | null {
    const to = pairShape(p.job, p.pairs + 1);
    if (to.ps > p.target.ps || to.workers > p.target.workers) return null;
    return to.ps === p.shape.ps && to.workers === p.shape.workers ? null : to;
  }

  private addPair(p: Packed): boolean {
    const to = this.next(p);
    if (!to) return false;
    const tasks = this.placeTasks(p.job, p.shape, to);
    if (!tasks) return false;
    p.tasks.push(...tasks);
    p.pairs++;
    p.shape = to;
    return true;
  }

  /** The next pair's alignment, each task on its best server now; −∞ when it does not fit. */
  private alignment(p: Packed): number {
    const to = this.next(p);
    if (!to) return -Infinity;
    let total = 0;
    if (to.ps > p.shape.ps) total += this.best(p.job.ps).score;
    if (to.workers > p.shape.workers) total += this.best(p.job.worker).score;
    return total;
  }

  /** Remaining seconds at the placed shape × the shape's normalised size. */
  private remainingWork(p: Packed): number {
    const t = remainingSeconds(p.job, p.shape.ps, p.shape.workers);
    let size = 0;
    for (let r = 0; r < this.scale.length; r++) {
      const d = (p.job.ps[r] ?? 0) * p.shape.ps + (p.job.worker[r] ?? 0) * p.shape.workers;
      size += d / ((this.scale[r] ?? 0) || 1);
    }
    return t * size;
  }

  /** The server that fits `demand` with the best alignment (−1 and −∞ when none fits). */
  private best(demand: Float64Array): { server: number; score: number } {
    const free = this.request.free;
    let server = -1;
    let top = -Infinity;
    for (let s = 0; s < free.length; s++) {
      const f = free[s];
      if (!f || !fits(f, demand)) continue;
      let score = 0;
      for (let r = 0; r < this.scale.length; r++)
        score += ((demand[r] ?? 0) * (f[r] ?? 0)) / ((this.scale[r] ?? 0) || 1) ** 2;
      if (score > top) [top, server] = [score, s];
    }
    return { server, score: top };
  }

  /** Places the tasks from `from` to `to`: the current server if it has room, else the best aligned. */
  private placeTasks(
    job: PreparedJob,
    from: JobShape,
    to: JobShape,
  ): { role: TaskRole; server: number }[] | null {
    const free = this.request.free;
    const taken: { role: TaskRole; server: number }[] = [];
    const tasks: { role: TaskRole; index: number }[] = [];
    for (let i = from.ps; i < to.ps; i++) tasks.push({ role: 'ps', index: i });
    for (let i = from.workers; i < to.workers; i++) tasks.push({ role: 'worker', index: i });
    for (const { role, index } of tasks) {
      const demand = role === 'ps' ? job.ps : job.worker;
      let server = this.currentServer(job, role, index);
      if (server < 0 || !fits(free[server] ?? new Float64Array(), demand)) server = this.best(demand).server;
      if (server < 0) {
        for (const t of taken)
          add(free[t.server] ?? new Float64Array(), t.role === 'ps' ? job.ps : job.worker);
        return null;
      }
      subtract(free[server] ?? new Float64Array(), demand);
      taken.push({ role, server });
    }
    return taken;
  }

  private currentServer(job: PreparedJob, role: TaskRole, index: number): number {
    const t = job.snapshot.current?.placement.find((p) => p.role === role && p.index === index);
    return t ? (this.request.input.serverIndex.get(t.server) ?? -1) : -1;
  }
}
