/**
 * Optimus placement (paper §4.2, Theorem 1): jobs smallest first; each job on the fewest servers
 * that can hold it, with its PS and workers spread evenly over them; servers roomiest first and
 * re-sorted after each job. Gang rule: a job is placed whole or not at all. When no even split
 * fits, `packByRole` tries an uneven one before the job is left waiting.
 */
import type { PlacementRequest, PlacementResult, Placer } from '../core/parts';
import type { PreparedJob } from '../core/prepare';
import { bundle, fits, subtract } from '../core/resource-vector';
import type { JobShape, TaskPlacement } from '../types';
import { evenGroups } from './even-bundles';
import { packByRole } from './pack-by-role';
import { ServerIndex } from './server-index';
import { shrinkToFit } from './shrink-to-fit';
import { guardedFit, strandingReserve, type FitTest } from './stranding';
import { TaskListBuilder } from './task-list';
import { shapeWords } from '../words';
import type { ServerCount } from './server-count';

export interface FewestServersOptions {
  /**
   * Servers the uneven fallback visits at most per role (beyond the sound pruning bound). Bounds
   * the cost of a job that cannot be placed; the roomiest servers come first, so a job that none
   * of them can hold is very unlikely to fit further down.
   */
  readonly scanLimit?: number;
  /**
   * Extra servers an even k-server attempt may look at beyond k. The paper tries "the k servers
   * with most room"; a little slack lets a bundle skip a roomy server that lacks one resource.
   */
  readonly slack?: number;
  /**
   * When no placement holds the allocated shape, run the job smaller rather than make it wait
   * (`shrink-to-fit.ts`; default true).
   */
  readonly shrink?: boolean;
  /**
   * Prefer placements that leave a rare resource (GPUs) usable (`stranding.ts`); a job only
   * falls back to unguarded placement when no guarded one exists (default true).
   */
  readonly strandingGuard?: boolean;
  /** When no even split fits, try an uneven one (`pack-by-role.ts`; default true). */
  readonly unevenFallback?: boolean;
  /**
   * 'bounded' (default): k runs from the least number of servers that could hold the job to twice
   * that (+4). 'all': k = 1, 2, … up to the job's task count, as the paper's §4.2 reads.
   */
  readonly evenSearch?: 'bounded' | 'all';
}

/** Builds the Optimus placer. */
export function fewestServersPlacer(options: FewestServersOptions = {}): Placer {
  const limits = {
    scanLimit: options.scanLimit ?? 512,
    slack: options.slack ?? 8,
    shrink: options.shrink ?? true,
    guard: options.strandingGuard ?? true,
    uneven: options.unevenFallback ?? true,
    all: options.evenSearch === 'all',
  };
  const even = (index: ServerIndex, job: PreparedJob, shape: JobShape, fit: FitTest = fits) =>
    placeEvenly({ index, job, shape, slack: limits.slack, fit, all: limits.all });
  const uneven = (index: ServerIndex, job: PreparedJob, shape: JobShape, fit: FitTest = fits) =>
    limits.uneven ? packByRole(index, job, shape, limits.scanLimit, fit) : null;
  return {
    name: 'fewest-servers',
    place({ input, jobs, free }: PlacementRequest): PlacementResult {
      const index = new ServerIndex(input, free);
      const guard = limits.guard ? guardedFit(strandingReserve(input)) : fits;
      const ordered = [...jobs].sort((a, b) => size(a.job, a.shape) - size(b.job, b.shape));
      const placed = new Map<string, readonly TaskPlacement[]>();
      const unplaced = new Map<string, string>();
      const shrunk = new Map<string, JobShape>();
      const names = input.servers.map((s) => s.name);
      for (const { job, shape } of ordered) {
        let counts = even(index, job, shape, guard) ?? uneven(index, job, shape, guard);
        if (!counts && guard !== fits) counts = even(index, job, shape) ?? uneven(index, job, shape);
        if (!counts && limits.shrink) {
          const smaller = shrinkToFit(index, job, shape, limits.scanLimit);
          if (smaller) shrunk.set(job.id, smaller.shape);
          counts = smaller?.counts ?? null;
        }
        if (!counts) {
          unplaced.set(job.id, `no set of servers can hold ${shapeWords(shape.ps, shape.workers)}`);
          continue;
        }
        placed.set(job.id, commit(index, job, counts, names));
      }
      return { placed, unplaced, shrunk };
    },
  };
}

/** Total demand in dominant shares: the paper's "ascending order of total demand". */
function size(job: PreparedJob, shape: JobShape): number {
  return shape.ps * job.psShare + shape.workers * job.workerShare;
}

const weight = (job: PreparedJob, g: { ps: number; workers: number }) =>
  g.ps * job.psShare + g.workers * job.workerShare;

/**
 * Theorem 1: the smallest k whose even split fits the k (+ slack) roomiest servers. k starts at
 * the least number of servers that could hold the job even empty, and stops at twice that (+4):
 * beyond it an even split is no longer "few servers", and the uneven fallback does better.
 */
function placeEvenly(o: {
  index: ServerIndex;
  job: PreparedJob;
  shape: JobShape;
  slack: number;
  fit: FitTest;
  all: boolean;
}): ServerCount[] | null {
  const { index, job, shape, slack, fit } = o;
  const needs = bundle(job.ps, shape.ps > 0 ? 1 : 0, job.worker, shape.workers > 0 ? 1 : 0);
  const total = bundle(job.ps, shape.ps, job.worker, shape.workers);
  const biggest = index.largestServer(needs);
  let k0 = 1;
  for (let r = 0; r < total.length; r++) {
    const t = total[r] ?? 0;
    if (t > 0) k0 = Math.max(k0, Math.ceil(t / (biggest[r] || Infinity) - 1e-9));
  }
  const kMax = Math.min(shape.ps + shape.workers, o.all ? index.free.length : 2 * k0 + 4);
  for (let k = k0; k <= kMax; k++) {
    const gs = evenGroups(shape.ps, shape.workers, k)
      .map((g) => ({ ...g, demand: bundle(job.ps, g.ps, job.worker, g.workers) }))
      .sort((a, b) => weight(job, b) - weight(job, a));
    const largest = gs[0]?.demand ?? needs;
    const smallest = gs[gs.length - 1]?.demand ?? needs;
    const chosen: ServerCount[] = [];
    index.visit(needs, { smallest, largest }, k + slack, (s) => {
      const f = index.free[s];
      const g = f && gs.find((x) => x.count > 0 && fit(f, x.demand));
      if (!g) return false;
      g.count--;
      chosen.push({ server: s, ps: g.ps, workers: g.workers });
      return chosen.length === k;
    });
    if (chosen.length === k) return chosen;
  }
  return null;
}

function commit(
  index: ServerIndex,
  job: PreparedJob,
  counts: readonly ServerCount[],
  names: readonly string[],
): TaskPlacement[] {
  const tasks = new TaskListBuilder();
  for (const c of counts) {
    const f = index.free[c.server];
    if (f) subtract(f, bundle(job.ps, c.ps, job.worker, c.workers));
    index.update(c.server);
    const name = names[c.server] ?? '';
    tasks.add('ps', name, c.ps);
    tasks.add('worker', name, c.workers);
  }
  return tasks.build();
}
