/**
 * Progressive filling on the servers themselves, tasks spread like the Kubernetes default
 * scheduler (kube-scheduler's NodeResourcesFit score, strategy LeastAllocated: each pod on the
 * node with the most free room that fits it; pods are bound one at a time). The placer of the
 * baselines that must never leave a job waiting while a smaller share would fit:
 *
 * - DRF (`growth: 'dominant-share'`; Ghodsi et al., NSDI 2011, computed by progressive filling): every
 *   job first gets its first bundle (its minimum shape, oldest first), then one 1:1 pair at a
 *   time goes to the job with the smallest dominant share whose next pair still finds servers,
 *   until no pair fits or every job is at its maximum. A job whose first bundle finds no room
 *   waits; nothing is sized against the aggregate pool and then found not to fit.
 * - "fill the head of the queue" (`growth: 'queue'`; the DL2 simulator's FIFO/SRTF, Peng et al.,
 *   pengyanghua/DL2 fifo_env.py / srtf_env.py): jobs in the allocator's order; each gets its
 *   first bundle and then pairs up to its maximum before the next job starts. With `headOfLine`,
 *   a job whose first bundle finds no room blocks every later one (FIFO).
 * - fixed shapes (`growth: 'none'`; Tiresias): jobs in the allocator's order, each at the shape it
 *   was allocated, whole or not at all; a job that does not fit is skipped (fit-first) and the
 *   later ones still try.
 *
 * A job's placed shape is what the filling reached (reported in `shrunk`, which compose uses as
 * the job's shape whether it is smaller or larger than the allocated one): the allocator only
 * admits and orders. Gang rule per step: a bundle or a pair is placed whole or not at all.
 * A running job's task goes back to the server it runs on when that server still has room, as
 * running pods stay bound in Kubernetes: a job whose share did not change is not restarted.
 */
import { BinaryHeap } from '../core/heap';
import type { PlacementJob, PlacementRequest, PlacementResult, Placer } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { add, bundle, dominantShare, fits, subtract } from '../core/resource-vector';
import { firstPairs, lastPairs, pairShape } from '../allocation/pairs';
import type { JobShape, TaskPlacement, TaskRole } from '../types';
import { ServerIndex } from './server-index';
import { TaskListBuilder } from './task-list';

export interface ProgressiveSpreadOptions {
  readonly growth: 'dominant-share' | 'queue' | 'none';
  /** With `growth: 'queue'`: a job whose first bundle does not fit blocks the later ones. */
  readonly headOfLine?: boolean;
  /** Servers visited per task beyond the sound pruning bound (see `ServerIndex.visit`). */
  readonly scanLimit?: number;
}

interface Filling {
  readonly job: PreparedJob;
  readonly order: number;
  readonly tasks: { role: TaskRole; server: number }[];
  pairs: number;
  shape: JobShape;
  share: number;
}

export function progressiveSpreadPlacer(options: ProgressiveSpreadOptions): Placer {
  const scanLimit = options.scanLimit ?? 512;
  return {
    name: { queue: 'fill-queue-spread', 'dominant-share': 'drf-spread', none: 'fixed-spread' }[
      options.growth
    ],
    place(request: PlacementRequest): PlacementResult {
      const ctx = new Context(request, scanLimit);
      const unplaced = new Map<string, string>();
      const admitted: Filling[] = [];
      const order = options.growth === 'dominant-share' ? byArrivalThenOrder(request.jobs) : request.jobs;
      let blocker: string | null = null;
      for (const [i, { job, shape }] of order.entries()) {
        if (blocker !== null) {
          unplaced.set(job.id, `queued behind ${blocker}`);
          continue;
        }
        const f = ctx.admit(job, i, options.growth === 'none' ? shape : undefined);
        if (!f) {
          unplaced.set(
            job.id,
            `no server has room for ${options.growth === 'none' ? 'its shape' : 'its first bundle'}`,
          );
          if (options.headOfLine) blocker = job.id;
          continue;
        }
        admitted.push(f);
        if (options.growth === 'queue') while (ctx.grow(f));
      }
      if (options.growth === 'dominant-share') fillByShare(ctx, admitted);
      const placed = new Map<string, readonly TaskPlacement[]>();
      const shrunk = new Map<string, JobShape>();
      for (const f of admitted) {
        placed.set(f.job.id, ctx.placement(f));
        shrunk.set(f.job.id, f.shape);
      }
      return { placed, unplaced, shrunk };
    },
  };
}

/** DRF's progressive filling: the smallest dominant share gets the next pair. */
function fillByShare(ctx: Context, admitted: readonly Filling[]): void {
  const heap = new BinaryHeap<Filling>(
    (a, b) => a.share < b.share || (a.share === b.share && a.order < b.order),
  );
  for (const f of admitted) heap.push(f);
  for (let f = heap.pop(); f !== undefined; f = heap.pop()) if (ctx.grow(f)) heap.push(f);
}

function byArrivalThenOrder(jobs: readonly PlacementJob[]): PlacementJob[] {
  return [...jobs].sort((a, b) => a.job.snapshot.arrivalTime - b.job.snapshot.arrivalTime);
}

class Context {
  private readonly index: ServerIndex;

  constructor(
    private readonly request: PlacementRequest,
    private readonly scanLimit: number,
  ) {
    this.index = new ServerIndex(request.input, request.free);
  }

  /** Places the job's first bundle (its minimum 1:1 shape) or `fixed`; null when it does not fit. */
  admit(job: PreparedJob, order: number, fixed?: JobShape): Filling | null {
    const pairs = fixed ? lastPairs(job) : firstPairs(job);
    const shape = fixed ?? pairShape(job, pairs);
    const tasks = this.placeTasks(job, { ps: 0, workers: 0 }, shape);
    if (!tasks) return null;
    return { job, order, tasks, pairs, shape, share: this.share(job, shape) };
  }

  /** Adds the job's next 1:1 pair if it fits; false at the maximum or when it does not. */
  grow(f: Filling): boolean {
    if (f.pairs >= lastPairs(f.job)) return false;
    const to = pairShape(f.job, f.pairs + 1);
    const tasks = this.placeTasks(f.job, f.shape, to);
    if (!tasks) return false;
    f.tasks.push(...tasks);
    f.pairs++;
    f.shape = to;
    f.share = this.share(f.job, to);
    return true;
  }

  placement(f: Filling): TaskPlacement[] {
    const names = this.request.input.servers;
    const list = new TaskListBuilder();
    for (const t of f.tasks) list.add(t.role, names[t.server]?.name ?? '');
    return list.build();
  }

  private share(job: PreparedJob, shape: JobShape): number {
    return dominantShare(bundle(job.ps, shape.ps, job.worker, shape.workers), this.request.input.total);
  }

  /**
   * Places the tasks that take the job from shape `from` to `to`: each on the server its task of
   * that index runs on now if it has room, else on the roomiest one; rolls back on a misfit.
   */
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
      if (server >= 0 && !fits(free[server] ?? new Float64Array(), demand)) server = -1;
      if (server < 0) {
        this.index.visit(demand, { smallest: demand, largest: demand }, this.scanLimit, (s) => {
          const f = free[s];
          if (f === undefined || !fits(f, demand)) return false;
          server = s;
          return true;
        });
      }
      if (server < 0) {
        for (const t of taken) this.release(t.server, t.role === 'ps' ? job.ps : job.worker);
        return null;
      }
      const f = free[server];
      if (f) subtract(f, demand);
      this.index.update(server);
      taken.push({ role, server });
    }
    return taken;
  }

  /** The server the job's task (role, index) runs on now, or -1. */
  private currentServer(job: PreparedJob, role: TaskRole, index: number): number {
    const t = job.snapshot.current?.placement.find((p) => p.role === role && p.index === index);
    return t ? (this.request.input.serverIndex.get(t.server) ?? -1) : -1;
  }

  private release(server: number, demand: Float64Array): void {
    const f = this.request.free[server];
    if (f) add(f, demand);
    this.index.update(server);
  }
}
