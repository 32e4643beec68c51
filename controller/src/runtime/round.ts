/**
 * One scheduling round, in numbered phases (as Kueue's `schedule()`):
 *   1. snapshot  — servers from the backend, jobs from the runtime's state
 *   2. refit     — convergence and speed models of every active job
 *   3. pre-run   — advance sample runs of new jobs; claim room for them
 *   4. decide    — the policy (full rounds only) on what remains
 *   5. plan      — diff(current, decided)
 *   6. execute   — through the backend's one executor
 *   7. confirm   — only applied actions change the runtime's records (assume-then-confirm)
 */
import type { Resources } from '../../../shared/src/units';
import type { ExecutionResult, PlanAction } from '../planning/types';
import type { JobSnapshot, ServerSnapshot } from '../scheduling/types';
import type { Backend } from './backend';
import type { Clock } from './clock';
import type { Core, CurrentJob } from './core';
import type { JobEntry } from './job-entry';
import { startSpan } from './job-record';
import type { RuntimeMetrics } from './metrics';
import {
  addResources,
  freeResources,
  pickServer,
  placeOn,
  preRunFootprint,
  seedOf,
  usageByServer,
} from './pre-run';
import { refitJob } from './refit';

export type RoundKind = 'full' | 'pre-run';

export interface RoundContext {
  readonly core: Core;
  readonly backend: Backend;
  readonly clock: Clock;
  readonly entries: ReadonlyMap<string, JobEntry>;
  readonly restartCostSec: number;
  readonly preRunBudget: number;
  /** Post-warm-up speed records per worker that end one pre-run sample. */
  readonly preRunRecordsPerWorker: number;
  readonly metrics: RuntimeMetrics;
}

export interface RoundOutcome {
  readonly actions: readonly PlanAction[];
  readonly result: ExecutionResult;
  /** Some job finished its pre-run and now needs a full round. */
  readonly needsFullRound: boolean;
}

const isActive = (e: JobEntry): boolean => e.rec.phase !== 'done' && e.rec.phase !== 'failed';

export async function runRound(ctx: RoundContext, kind: RoundKind): Promise<RoundOutcome> {
  const servers = await ctx.backend.servers(); // 1
  const stopTimer = ctx.metrics.decisionLatency.startTimer();
  const active = [...ctx.entries.values()].filter(isActive);
  for (const e of active) refit(ctx, e); // 2
  const confirm = new Map<PlanAction, () => void>();
  const pre = preRunPhase(ctx, active, servers, kind, confirm); // 3
  const actions: PlanAction[] = [];
  if (kind === 'full') actions.push(...decideAndPlan(ctx, active, servers, pre.claimed, confirm)); // 4, 5
  actions.push(...pre.actions);
  stopTimer();
  const result = await ctx.backend.executor.execute({ actions }); // 6
  for (const a of result.applied) {
    confirm.get(a)?.(); // 7
    ctx.metrics.planActions.inc({ kind: a.kind, result: 'applied' });
  }
  for (const f of result.failed) ctx.metrics.planActions.inc({ kind: f.action.kind, result: 'failed' });
  ctx.metrics.rounds.inc();
  return { actions, result, needsFullRound: pre.finished };
}

function refit(ctx: RoundContext, e: JobEntry): void {
  e.models = refitJob(ctx.core, e.rec, e.obs);
  ctx.metrics.fits.inc({ model: 'convergence', result: e.models.convergence.status });
  ctx.metrics.fits.inc({ model: 'speed', result: e.models.speedFitted ? 'ok' : 'insufficient-data' });
}

const fittedNow = (e: JobEntry): boolean =>
  e.models !== null && e.models.convergence.status === 'ok' && e.models.speedFitted;

/** Phase 3: advance running samples, start new jobs' pre-runs where there is room. */
function preRunPhase(
  ctx: RoundContext,
  active: readonly JobEntry[],
  servers: readonly ServerSnapshot[],
  kind: RoundKind,
  confirm: Map<PlanAction, () => void>,
): { actions: PlanAction[]; claimed: Map<string, Resources>; finished: boolean } {
  const claimed = new Map<string, Resources>();
  const used = new Map<string, Resources>();
  const actions: PlanAction[] = [];
  let finished = false;
  for (const e of active) {
    const { rec } = e;
    if (rec.phase === 'pre-run' && rec.preRun && rec.current) {
      const server = rec.current.placement[0]?.server ?? '';
      claimed.set(
        server,
        addResources(claimed.get(server) ?? {}, preRunFootprint(rec.spec, rec.preRun.shapes)),
      );
    } else if (kind === 'pre-run' && rec.current) usageByServer(rec.spec, rec.current.placement, used);
  }
  for (const [k, v] of claimed) used.set(k, addResources(used.get(k) ?? {}, v));
  for (const e of active) {
    if (e.rec.phase === 'pre-run') finished = advancePreRun(ctx, e, actions, confirm) || finished;
  }
  const free = freeResources(servers, used);
  const pending = active
    .filter((e) => e.rec.phase === 'pending')
    .sort((a, b) => a.rec.submittedAt - b.rec.submittedAt);
  for (const e of pending) {
    const spec = e.rec.spec;
    const shapes = ctx.core.sampleShapes({
      budget: ctx.preRunBudget,
      maxPs: Math.min(spec.maxPs, 2),
      maxWorkers: Math.min(spec.maxWorkers, 3),
      mode: spec.mode,
      seed: seedOf(`${spec.namespace}/${spec.name}`),
    });
    const first = shapes[0];
    if (!first) {
      e.rec.phase = 'running';
      finished = true;
      continue;
    }
    const footprint = preRunFootprint(spec, shapes);
    const server = pickServer(free, footprint);
    if (server === null) {
      e.rec.reason = 'waiting for room to pre-run';
      continue;
    }
    free.set(server, addResources(free.get(server) ?? {}, negate(footprint)));
    claimed.set(server, addResources(claimed.get(server) ?? {}, footprint));
    const action: PlanAction = {
      kind: 'start',
      jobId: idOf(e),
      shape: first,
      placement: placeOn(server, first),
    };
    actions.push(action);
    confirm.set(action, () => {
      e.rec.preRun = { shapes, done: 0 };
      e.rec.phase = 'pre-run';
      e.rec.reason = null;
      e.rec.current = { shape: first, placement: action.placement.map((p) => ({ ...p })) };
      startSpan(e.rec, first, ctx.clock.wallMs(), false);
    });
  }
  return { actions, claimed, finished };
}

/** Moves a pre-running job to its next sample shape once the current one has enough records. */
function advancePreRun(
  ctx: RoundContext,
  e: JobEntry,
  actions: PlanAction[],
  confirm: Map<PlanAction, () => void>,
): boolean {
  const { rec } = e;
  const cur = rec.current;
  if (!rec.preRun || !cur) return false;
  const enough = e.obs.samplesInSpan(rec.spans.length - 1) >= ctx.preRunRecordsPerWorker * cur.shape.workers;
  if (!enough) return false;
  const next = rec.preRun.shapes[rec.preRun.done + 1];
  if (!next) {
    rec.preRun.done = rec.preRun.shapes.length;
    rec.phase = 'running';
    return true;
  }
  const server = cur.placement[0]?.server ?? '';
  const action: PlanAction = {
    kind: 'resize',
    jobId: idOf(e),
    from: cur.shape,
    shape: next,
    placement: placeOn(server, next),
  };
  actions.push(action);
  confirm.set(action, () => {
    if (rec.preRun) rec.preRun.done += 1;
    applyShape(ctx, e, action.shape, action.placement, true);
  });
  return false;
}

/** Phases 4 and 5: the policy on the jobs past their pre-run, then the diff. */
function decideAndPlan(
  ctx: RoundContext,
  active: readonly JobEntry[],
  servers: readonly ServerSnapshot[],
  claimed: ReadonlyMap<string, Resources>,
  confirm: Map<PlanAction, () => void>,
): PlanAction[] {
  const scheduled = active.filter((e) => e.rec.phase === 'running' || e.rec.phase === 'waiting');
  if (scheduled.length === 0) return [];
  const input = {
    now: ctx.clock.now(),
    servers: servers.map((s) => ({ ...s, reserved: addResources(s.reserved, claimed.get(s.name) ?? {}) })),
    jobs: scheduled.map((e) => jobSnapshot(e)),
    restartCostSec: ctx.restartCostSec,
  };
  const decision = ctx.core.policy.decide(input);
  const current = new Map<string, CurrentJob | null>(scheduled.map((e) => [idOf(e), e.rec.current]));
  const plan = ctx.core.plan(current, decision);
  const byId = new Map(scheduled.map((e) => [idOf(e), e]));
  for (const d of decision.jobs) {
    const e = byId.get(d.jobId);
    if (e && d.action === 'wait' && !e.rec.current) [e.rec.phase, e.rec.reason] = ['waiting', d.reason];
  }
  for (const a of plan.actions) {
    const e = byId.get(a.jobId);
    if (e) confirm.set(a, () => applyAction(ctx, e, a));
  }
  return [...plan.actions];
}

function applyAction(ctx: RoundContext, e: JobEntry, a: PlanAction): void {
  const { rec } = e;
  switch (a.kind) {
    case 'start':
      applyShape(ctx, e, a.shape, a.placement, false);
      return;
    case 'resize':
      applyShape(ctx, e, a.shape, a.placement, true);
      return;
    case 'suspend':
      rec.current = null;
      startSpan(rec, null, ctx.clock.wallMs(), false);
      [rec.phase, rec.reason] = ['waiting', a.reason];
      return;
    case 'replace-worker':
      if (!rec.current) return;
      rec.current.placement = rec.current.placement.map((p) =>
        p.role === 'worker' && p.index === a.index ? { ...p, server: a.server } : p,
      );
      // A new span at the same shape: the replacement is judged on its own records.
      startSpan(rec, rec.current.shape, ctx.clock.wallMs(), rec.spans.at(-1)?.fitted ?? false);
  }
}

function applyShape(
  ctx: RoundContext,
  e: JobEntry,
  shape: CurrentJob['shape'],
  placement: CurrentJob['placement'],
  restart: boolean,
): void {
  const { rec } = e;
  rec.current = { shape: { ...shape }, placement: placement.map((p) => ({ ...p })) };
  if (restart) rec.restarts += 1;
  startSpan(rec, shape, ctx.clock.wallMs(), rec.phase !== 'pre-run' && fittedNow(e));
  if (rec.phase !== 'pre-run') [rec.phase, rec.reason] = ['running', null];
}

function jobSnapshot(e: JobEntry): JobSnapshot {
  const { spec, current, submittedAt } = e.rec;
  const m = e.models;
  if (!m) throw new Error(`job ${idOf(e)} has no models`);
  return {
    id: idOf(e),
    mode: spec.mode,
    psDemand: spec.psDemand,
    workerDemand: spec.workerDemand,
    minPs: spec.minPs,
    maxPs: spec.maxPs,
    minWorkers: spec.minWorkers,
    maxWorkers: spec.maxWorkers,
    arrivalTime: submittedAt,
    current,
    remaining: m.remaining,
    speed: m.speed,
    workerStepTimes: e.obs.workerStepTimes(e.rec.spans.length - 1),
  };
}

const idOf = (e: JobEntry): string => `${e.rec.spec.namespace}/${e.rec.spec.name}`;

function negate(r: Resources): Resources {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, -v]));
}
