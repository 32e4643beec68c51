/**
 * A policy = an allocator + a placer (+ optional straggler replacement). The round has numbered
 * phases, like Kueue's `schedule()`:
 *   1. prepare   — validate and vectorise the snapshot (invalid jobs wait with a reason);
 *   2. allocate  — shapes against the cluster's aggregate pool;
 *   3. keep      — running jobs with an unchanged shape (optionally: a smaller one) stay on
 *                  their servers if they still fit;
 *   4. place     — the placer puts the rest on servers, whole jobs or nothing;
 *   5. re-run    — jobs that could not be placed wait, their share goes back to the pool and
 *                  allocation runs again for the others (at most `passes` times);
 *   6. backfill  — a job still waiting gets its minimum shape if the placer finds room for it in
 *                  what is left, so no job waits beside room that would hold it (the passes can
 *                  run out first: sized on the aggregate pool, each pass may drop another job);
 *   7. stragglers — kept jobs get slow workers replaced.
 * Pure and deterministic: the same input gives the same decision.
 */
import type { Allocation, Allocator, Placer, PlacementJob } from './core/parts';
import { prepare, type PreparedInput, type PreparedJob } from './core/prepare';
import { replaceStragglers } from './core/replace-stragglers';
import { keepCurrentPlacements } from './core/sticky';
import type { StragglerOptions } from './stragglers';
import type { Decision, JobDecision, JobShape, Policy, PolicyInput, TaskPlacement } from './types';

export interface ComposeOptions {
  readonly name: string;
  readonly description: string;
  readonly allocator: Allocator;
  readonly placer: Placer;
  /** Replace stragglers of jobs that keep running as they are; false to disable. */
  readonly stragglers?: StragglerOptions | false;
  /** Allocation + placement passes before unplaced jobs simply wait (default 3). */
  readonly passes?: number;
  /** A running job that shrinks keeps its remaining tasks where they are (`core/sticky.ts`). */
  readonly keepShrunk?: boolean;
  /** See {@link Policy.needsSpeedModel} (default true). */
  readonly needsSpeedModel?: boolean;
  /** See `Policy.parameterAssignment`. */
  readonly parameterAssignment?: 'paa' | 'mxnet-default';
  /** Phase 6 (default true); false for FIFO, whose later jobs wait behind a blocked head by design. */
  readonly backfill?: boolean;
}

interface RoundResult {
  readonly shapes: ReadonlyMap<string, JobShape>;
  readonly placements: Map<string, readonly TaskPlacement[]>;
  readonly kept: ReadonlySet<string>;
  readonly waiting: Map<string, string>;
  readonly free: Float64Array[];
}

/** Builds a policy from parts. */
export function composePolicy(options: ComposeOptions): Policy {
  const passes = Math.max(1, options.passes ?? 3);
  return {
    name: options.name,
    description: options.description,
    ...(options.needsSpeedModel === false ? { needsSpeedModel: false } : {}),
    ...(options.parameterAssignment ? { parameterAssignment: options.parameterAssignment } : {}),
    decide(input: PolicyInput): Decision {
      const prepared = prepare(input);
      const round = schedule(prepared, options, passes);
      return { jobs: decisions(input, prepared, round, options.stragglers ?? false) };
    },
  };
}

function schedule(prepared: PreparedInput, options: ComposeOptions, passes: number): RoundResult {
  const waiting = new Map<string, string>();
  for (let pass = 1; ; pass++) {
    const jobs = prepared.jobs.filter((j) => !waiting.has(j.id));
    const allocation = options.allocator.allocate({ input: prepared, jobs });
    const toPlace = inOrder(jobs, allocation);
    const free = prepared.servers.map((s) => Float64Array.from(s.allocatable));
    const placements = keepCurrentPlacements(prepared, toPlace, free, {
      shrinks: options.keepShrunk ?? false,
    });
    const kept = new Set(placements.keys());
    const result = options.placer.place({
      input: prepared,
      jobs: toPlace.filter((j) => !kept.has(j.job.id)),
      free,
    });
    for (const [id, p] of result.placed) placements.set(id, p);
    if (result.unplaced.size === 0 || pass >= passes) {
      for (const [id, reason] of allocation.waiting) waiting.set(id, reason);
      for (const [id, reason] of result.unplaced) waiting.set(id, reason);
      const shapes = new Map(allocation.shapes);
      for (const [id, shape] of result.shrunk ?? []) shapes.set(id, shape);
      if (options.backfill ?? true) {
        backfill(
          { prepared, placer: options.placer, order: allocation.order, free },
          { shapes, placements, waiting },
        );
      }
      return { shapes, placements, kept, waiting, free };
    }
    for (const [id, reason] of result.unplaced) waiting.set(id, reason);
  }
}

/** Phase 6: each waiting job, in the allocator's order (else by arrival), at its minimum shape. */
function backfill(
  ctx: {
    readonly prepared: PreparedInput;
    readonly placer: Placer;
    readonly order: readonly string[] | undefined;
    readonly free: Float64Array[];
  },
  out: {
    shapes: Map<string, JobShape>;
    placements: Map<string, readonly TaskPlacement[]>;
    waiting: Map<string, string>;
  },
): void {
  const rank = new Map((ctx.order ?? []).map((id, i) => [id, i]));
  const candidates = ctx.prepared.jobs
    .filter((j) => out.waiting.has(j.id))
    .sort(
      (a, b) =>
        (rank.get(a.id) ?? Infinity) - (rank.get(b.id) ?? Infinity) ||
        a.snapshot.arrivalTime - b.snapshot.arrivalTime,
    );
  for (const job of candidates) {
    const shape = { ps: job.minPs, workers: job.minWorkers };
    const r = ctx.placer.place({ input: ctx.prepared, jobs: [{ job, shape }], free: ctx.free });
    const placement = r.placed.get(job.id);
    if (!placement) continue;
    out.placements.set(job.id, placement);
    out.shapes.set(job.id, r.shrunk?.get(job.id) ?? shape);
    out.waiting.delete(job.id);
  }
}

/** The jobs that got a shape, in the allocator's order when it gives one (else id order). */
function inOrder(jobs: readonly PreparedJob[], allocation: Allocation): PlacementJob[] {
  const toPlace: PlacementJob[] = [];
  for (const job of jobs) {
    const shape = allocation.shapes.get(job.id);
    if (shape) toPlace.push({ job, shape });
  }
  if (!allocation.order) return toPlace;
  const rank = new Map(allocation.order.map((id, i) => [id, i]));
  const last = allocation.order.length;
  // Stable: jobs the order leaves out keep id order after the others.
  return toPlace.sort((a, b) => (rank.get(a.job.id) ?? last) - (rank.get(b.job.id) ?? last));
}

function decisions(
  input: PolicyInput,
  prepared: PreparedInput,
  round: RoundResult,
  stragglers: StragglerOptions | false,
): JobDecision[] {
  const byId = new Map(prepared.jobs.map((j) => [j.id, j]));
  const seen = new Set<string>();
  return input.jobs.map((snapshot): JobDecision => {
    const jobId = snapshot.id;
    if (seen.has(jobId)) return { jobId, action: 'wait', reason: 'duplicate job id in the snapshot' };
    seen.add(jobId);
    const invalid = prepared.invalid.get(jobId);
    if (invalid !== undefined) return { jobId, action: 'wait', reason: invalid };
    const shape = round.shapes.get(jobId);
    const placement = round.placements.get(jobId);
    const job = byId.get(jobId);
    if (!shape || !placement || !job) {
      return { jobId, action: 'wait', reason: round.waiting.get(jobId) ?? 'not scheduled' };
    }
    if (stragglers === false || !round.kept.has(jobId)) {
      return { jobId, action: 'run', shape, placement, replaceWorkers: [] };
    }
    const replaced = replaceStragglers(prepared, job, placement, round.free, stragglers);
    return { jobId, action: 'run', shape, ...replaced };
  });
}
