/**
 * Round phase: the paper's pre-run (§3.2). A new job runs briefly at a handful of sample shapes to
 * seed its speed model; each sample ends once every worker has logged enough speed records. The
 * phase starts from what is observed: a sample whose rollout failed is simply started again, one
 * that a crash interrupted is adopted.
 */
import type { Resources } from '../../../shared/src/units';
import type { PlanAction } from '../planning/types';
import type { JobShape, ServerSnapshot } from '../scheduling/types';
import type { Core, CurrentJob } from './core';
import type { JobEntry } from './job-entry';
import { jobIdOf } from './job-spec';
import { usageOf } from './observation';
import { placePreRun, roleFilter } from '../scheduling/placement/pre-run-placement';
import { seedOf } from './pre-run';
import { MIN_FIT_SHAPES } from './refit';

export interface PreRunContext {
  readonly core: Core;
  readonly budget: number;
  /** Largest sample shape (the job's own limits apply too). */
  readonly maxPs: number;
  readonly maxWorkers: number;
  /** Post-warm-up speed records per worker that end one sample. */
  readonly recordsPerWorker: number;
  /** True when the job has a rollout in flight (it is left alone). */
  readonly busy: (jobId: string) => boolean;
  /** The servers observed this round (their labels and taints decide where a sample may run). */
  readonly servers: readonly ServerSnapshot[];
  /** Shapes at which other jobs of the same model already measured speeds (see `speed-peers.ts`). */
  readonly peerShapes?: (e: JobEntry) => number;
}

/** One job's pre-run step: the actions, what it will hold, and what to record once they apply. */
export interface PreRunStep {
  readonly entry: JobEntry;
  readonly actions: readonly PlanAction[];
  readonly target: CurrentJob | null;
  /** Applied to the job's intent once the rollout confirms. */
  readonly confirm: () => void;
}

export interface PreRunOutcome {
  readonly steps: PreRunStep[];
  /** Some job finished its pre-run: the policy should see it soon. */
  readonly finished: boolean;
  /** Jobs whose pre-run step threw (they are set aside this round), with the reason. */
  readonly failed: { readonly entry: JobEntry; readonly error: string }[];
}

/** New jobs that may fail to find room in one round before the rest of the queue waits. */
const MAX_PENDING_TRIES = 8;

const same = (a: JobShape, b: JobShape): boolean => a.ps === b.ps && a.workers === b.workers;

/**
 * Advances running samples and starts new jobs' pre-runs where `free` has room (taking from it).
 * Jobs are served in submission order.
 */
export function preRunPhase(
  ctx: PreRunContext,
  entries: readonly JobEntry[],
  free: Map<string, Resources>,
): PreRunOutcome {
  const steps: PreRunStep[] = [];
  const failed: PreRunOutcome['failed'] = [];
  let finished = false;
  const ordered = entries
    .filter((e) => (e.rec.phase === 'pending' || e.rec.phase === 'pre-run') && !ctx.busy(jobIdOf(e.rec.spec)))
    .sort((a, b) => a.rec.submittedAt - b.rec.submittedAt);
  let tries = 0;
  for (const e of ordered) {
    // A saturated cluster with a long queue: once a few new jobs found no room, the rest wait for
    // the next round rather than each scanning every server again.
    if (e.rec.phase === 'pending' && tries >= MAX_PENDING_TRIES) {
      e.rec.reason = 'waiting for room to pre-run';
      continue;
    }
    try {
      if (e.rec.phase === 'pending' && !adoptOrBegin(ctx, e)) {
        finished = true;
        continue;
      }
      const pending = e.rec.phase === 'pending';
      const r = stepOf(ctx, e, free);
      if (r === 'finished') finished = true;
      else if (r) steps.push(r);
      else if (pending) tries += 1;
    } catch (err) {
      failed.push({ entry: e, error: `pre-run: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return { steps, finished, failed };
}

/**
 * A pending job gets its sample shapes. False when it needs none (the job goes straight to the
 * policy). A pending job observed running (a crash before its start confirmed) is adopted.
 */
function adoptOrBegin(ctx: PreRunContext, e: JobEntry): boolean {
  const { spec } = e.rec;
  const shapes = ctx.core.sampleShapes({
    budget: ctx.budget,
    maxPs: Math.min(spec.maxPs, ctx.maxPs),
    maxWorkers: Math.min(spec.maxWorkers, ctx.maxWorkers),
    mode: spec.mode,
    seed: seedOf(jobIdOf(spec)),
  });
  // Jobs of the same model measured enough shapes already: their speeds seed this job's model.
  if (shapes.length === 0 || (ctx.peerShapes?.(e) ?? 0) >= MIN_FIT_SHAPES) {
    [e.rec.phase, e.rec.reason] = ['running', null];
    return false;
  }
  e.rec.preRun = { shapes, done: 0 };
  if (e.current) e.rec.phase = 'pre-run';
  return true;
}

function stepOf(
  ctx: PreRunContext,
  e: JobEntry,
  free: Map<string, Resources>,
): PreRunStep | 'finished' | null {
  const { rec } = e;
  const pre = rec.preRun;
  if (!pre) return null;
  const cur = e.current;
  const next = pre.shapes[pre.done + 1];
  if (cur && next && same(cur.shape, next)) pre.done += 1; // a crash came between the resize and its record
  const want = pre.shapes[pre.done];
  if (!want) return endPreRun(e);
  if (!cur) return startSample(ctx, e, want, free);
  if (!same(cur.shape, want)) return moveTo(ctx, e, cur, [want], free, 0);
  const enough =
    e.obs.samplesInSpan(rec.spans.length - 1) >= e.obs.samplesNeeded(ctx.recordsPerWorker, cur.shape.workers);
  if (!enough) return null;
  const rest = pre.shapes.slice(pre.done + 1);
  if (rest.length === 0) return endPreRun(e);
  const step = moveTo(ctx, e, cur, rest, free, 1);
  // No room for any further sample: with enough shapes measured the policy takes the job as it is.
  if (step === null && pre.done + 1 >= MIN_FIT_SHAPES) return endPreRun(e);
  return step;
}

function endPreRun(e: JobEntry): 'finished' {
  const { rec } = e;
  if (rec.preRun) rec.preRun.done = rec.preRun.shapes.length;
  [rec.phase, rec.reason] = ['running', null];
  return 'finished';
}

function startSample(
  ctx: PreRunContext,
  e: JobEntry,
  shape: JobShape,
  free: Map<string, Resources>,
): PreRunStep | null {
  const { rec } = e;
  const placement = placePreRun(free, rec.spec, shape, roleFilter(rec.spec, ctx.servers));
  if (placement === null) {
    rec.reason = 'waiting for room to pre-run';
    return null;
  }
  const action: PlanAction = { kind: 'start', jobId: jobIdOf(rec.spec), shape, placement };
  return {
    entry: e,
    actions: [action],
    target: { shape, placement },
    confirm: () => {
      [rec.phase, rec.reason] = ['pre-run', null];
    },
  };
}

/**
 * Resizes to the first of `candidates` that fits the free resources plus what the job holds now
 * (samples that do not fit are skipped: the job still trains at its current one meanwhile).
 * `skip`: how many samples the move completes (1 when the current one is done).
 */
function moveTo(
  ctx: PreRunContext,
  e: JobEntry,
  cur: CurrentJob,
  candidates: readonly JobShape[],
  free: Map<string, Resources>,
  skip: number,
): PreRunStep | null {
  const { rec } = e;
  const room = new Map(free);
  for (const [server, u] of usageOf(rec.spec, cur.placement)) {
    const f: Record<string, number> = { ...(room.get(server) ?? {}) };
    for (const [k, v] of Object.entries(u)) f[k] = (f[k] ?? 0) + v;
    room.set(server, f);
  }
  const admits = roleFilter(rec.spec, ctx.servers);
  for (const [i, shape] of candidates.entries()) {
    const trial = new Map(room);
    const placement = placePreRun(trial, rec.spec, shape, admits);
    if (placement === null) continue;
    for (const [k, v] of trial) free.set(k, v);
    const action: PlanAction = {
      kind: 'resize',
      jobId: jobIdOf(rec.spec),
      from: cur.shape,
      shape,
      placement,
    };
    return {
      entry: e,
      actions: [action],
      target: { shape, placement },
      confirm: () => {
        const pre = rec.preRun;
        if (pre && i > 0) pre.shapes.splice(pre.done + skip, i); // the skipped samples are dropped
        if (pre) pre.done += skip;
        [rec.phase, rec.reason] = ['pre-run', null];
      },
    };
  }
  return null;
}
