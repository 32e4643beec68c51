/**
 * One level-triggered round, in numbered phases (as Kueue's `schedule()`):
 *   1. observe   — what runs, from the backend's own view (never from the runtime's memory)
 *   2. reconcile — each job's shape history and end follow the observation; the convergence rule
 *                  on the logged loss, and a program that exited, end a job
 *   3. refit     — convergence and speed models of every active job that has new observations
 *   4. finish    — a job that is over and still holds something (or is not yet recorded as over)
 *   5. pre-run   — advance sample runs of new jobs; start new ones where there is room
 *   6. decide    — the policy (full rounds) on the jobs nobody else moves this round
 *   7. plan      — diff(observed, decided)
 *   8. dispatch  — each job's actions to the executor, not awaited (assume, then confirm or forget)
 * Every stage that can fail for one job is isolated: the job is marked degraded, the rest go on.
 */
import type { Resources } from '../../../shared/src/units';
import type { PlanAction } from '../planning/types';
import type { ServerSnapshot } from '../scheduling/types';
import type { Backend, JobEnd, Observation } from './backend';
import type { Clock } from './clock';
import type { Core, CurrentJob } from './core';
import { decideAndPlan } from './decide-phase';
import type { Assumed } from './dispatch';
import { LOST_SIDECAR_GRACE_MS, lostWorkers, type JobEntry } from './job-entry';
import type { DegradedStage } from './job-record';
import { jobIdOf } from './job-spec';
import type { RuntimeMetrics } from './metrics';
import { addUsage, heldBy, holdsAnything, maxUsage, stoppingTasks, usageOf } from './observation';
import { preRunPhase } from './pre-run-phase';
import { freeResources } from '../scheduling/placement/pre-run-placement';
import { isTerminal, reconcileJob, type ReconcileTime } from './reconcile';
import { refitJob } from './refit';
import { SpeedPeers } from './speed-peers';

export type RoundKind = 'full' | 'pre-run';

/** One job's actions for the dispatcher, and what to record in its intent once they apply. */
export interface Dispatch {
  readonly entry: JobEntry;
  readonly actions: readonly PlanAction[];
  readonly target: CurrentJob | null;
  readonly confirm?: () => void;
}

export interface RoundContext {
  readonly core: Core;
  readonly backend: Backend;
  readonly clock: Clock;
  readonly entries: ReadonlyMap<string, JobEntry>;
  readonly restartCostSec: number;
  readonly preRun: {
    readonly budget: number;
    readonly maxPs: number;
    readonly maxWorkers: number;
    readonly recordsPerWorker: number;
  };
  readonly metrics: RuntimeMetrics;
  /** The rollout a job has in flight (assumed), if any; `busy` also covers an abandoned one. */
  readonly assumed: (jobId: string) => Assumed | undefined;
  readonly busy: (jobId: string) => boolean;
  /** Hands a job's actions to the dispatcher; false when it could not take them this round. */
  readonly dispatch: (d: Dispatch) => boolean;
  readonly degrade: (e: JobEntry, stage: DegradedStage, reason: string) => void;
  readonly heal: (e: JobEntry, stage: DegradedStage) => void;
}

export interface RoundOutcome {
  readonly dispatched: readonly PlanAction[];
  readonly ended: readonly { readonly jobId: string; readonly end: JobEnd }[];
  /** Some job finished its pre-run and now needs a full round. */
  readonly needsFullRound: boolean;
}

type Usage = Map<string, Record<string, number>>;

export async function runRound(ctx: RoundContext, kind: RoundKind): Promise<RoundOutcome> {
  const observation = await ctx.backend.observe(); // 1
  const stopTimer = ctx.metrics.decisionLatency.startTimer();
  const t: ReconcileTime = { now: ctx.clock.now(), wallMs: ctx.clock.wallMs() };
  const ended: { jobId: string; end: JobEnd }[] = [];
  for (const [id, e] of ctx.entries) {
    const end = reconcileJob(e, observation.jobs.get(id), { ...t, inFlight: ctx.busy(id) }); // 2
    if (end) ended.push({ jobId: id, end });
  }
  const active = [...ctx.entries.values()].filter((e) => !isTerminal(e));
  // Without a pre-run (the policy needs no speed model) a new job goes to the policy at once.
  let admitted = false;
  if (ctx.preRun.budget < 1)
    for (const e of active)
      if (e.rec.phase === 'pending') {
        [e.rec.phase, e.rec.reason] = ['running', null];
        admitted = true;
      }
  const peers = new SpeedPeers(ctx.entries.values());
  if (kind === 'full') for (const e of active) refit(ctx, e, peers); // 3
  const dispatches: Dispatch[] = finishPhase(ctx); // 4
  const scheduled = kind === 'full' ? active.filter((e) => schedulable(ctx, e)) : [];
  const free = freeResources(observation.servers, held(ctx, observation, new Set(scheduled)));
  const pre = preRunPhase(
    {
      core: ctx.core,
      ...ctx.preRun,
      busy: ctx.busy,
      servers: observation.servers,
      peerShapes: (e) => peers.shapes(e),
    },
    active,
    free,
  ); // 5
  for (const f of pre.failed) ctx.degrade(f.entry, 'plan', f.error);
  dispatches.push(...pre.steps);
  if (scheduled.length > 0) dispatches.push(...decidePhase(ctx, scheduled, observation.servers, free)); // 6, 7
  stopTimer();
  const dispatched: PlanAction[] = [];
  for (const d of dispatches) if (ctx.dispatch(d)) dispatched.push(...d.actions); // 8
  ctx.metrics.rounds.inc();
  return { dispatched, ended, needsFullRound: pre.finished || (admitted && kind !== 'full') };
}

/** Phase 3 for one job, isolated: a failed refit keeps the last good models and marks the job. */
function refit(ctx: RoundContext, e: JobEntry, peers: SpeedPeers): void {
  const key = `${e.obs.version}:${e.rec.spans.length}:${peers.version(e)}`;
  if (e.fittedAt === key && e.models) return;
  try {
    const models = refitJob(ctx.core, e.rec, e.obs, e.models, peers.samples(e));
    e.models = models;
    e.fittedAt = key;
    ctx.heal(e, 'refit');
    ctx.metrics.fits.inc({ model: 'convergence', result: models.convergence.status });
    ctx.metrics.fits.inc({ model: 'speed', result: models.speedFitted ? 'ok' : 'insufficient-data' });
  } catch (err) {
    e.fittedAt = key; // the same data would fail the same way: wait for new observations
    ctx.degrade(e, 'refit', err instanceof Error ? err.message : String(err));
    ctx.metrics.fits.inc({ model: 'convergence', result: 'error' });
  }
}

/** Phase 4: a job that is over is recorded as over and stopped, until nothing of it is observed. */
function finishPhase(ctx: RoundContext): Dispatch[] {
  const out: Dispatch[] = [];
  for (const [id, e] of ctx.entries) {
    if (!isTerminal(e) || ctx.busy(id) || !e.observed) continue;
    if (!holdsAnything(e.observed) && e.observed.finished) continue;
    const end = e.rec.end ?? {
      outcome: e.rec.phase === 'done' ? ('succeeded' as const) : ('failed' as const),
      reason: 'Completed',
      message: 'the job ended before this controller version recorded why',
    };
    // A job still training (its rule fired) saves its model; one whose program exited has nothing to save.
    const checkpoint = end.reason === 'Converged' && e.current !== null;
    out.push({
      entry: e,
      actions: [{ kind: 'finish', jobId: id, ...end, checkpoint }],
      target: null,
    });
  }
  return out;
}

/** Jobs the policy re-decides this round: past their pre-run, with models, nothing in flight. */
function schedulable(ctx: RoundContext, e: JobEntry): boolean {
  const phase = e.rec.phase;
  return (phase === 'running' || phase === 'waiting') && e.models !== null && !ctx.busy(jobIdOf(e.rec.spec));
}

/**
 * What our jobs hold that the policy must not hand out: everything of the jobs it does not
 * re-decide (pre-runs, rollouts in flight at the worst of before and after, jobs being finished),
 * and the tasks still shutting down of those it does.
 */
function held(ctx: RoundContext, observation: Observation, scheduled: ReadonlySet<JobEntry>): Usage {
  const out: Usage = new Map();
  for (const [id, e] of ctx.entries) {
    const observed = observation.jobs.get(id);
    if ((observed?.tasks.length ?? 0) === 0 && !ctx.busy(id)) continue; // holds nothing
    if (scheduled.has(e)) {
      addUsage(out, usageOf(e.rec.spec, stoppingTasks(observed)));
      continue;
    }
    let holding: Usage = heldBy(e.rec.spec, observed) as Usage;
    const target = ctx.assumed(id)?.target;
    if (target) holding = maxUsage(holding, usageOf(e.rec.spec, target.placement));
    addUsage(out, holding);
  }
  return out;
}

/** Phases 6 and 7 on what is left once the pre-runs took their room. */
function decidePhase(
  ctx: RoundContext,
  scheduled: readonly JobEntry[],
  servers: readonly ServerSnapshot[],
  free: ReadonlyMap<string, Resources>,
): Dispatch[] {
  // The policy re-decides its jobs from scratch: all it must not use is what is not free to it.
  const view = servers.map((s) => ({ ...s, reserved: reservedFrom(s.capacity, free.get(s.name) ?? {}) }));
  const wall = ctx.clock.wallMs();
  const grace = LOST_SIDECAR_GRACE_MS / ctx.clock.scale;
  const outcome = decideAndPlan(
    ctx.core,
    scheduled,
    { now: ctx.clock.now(), servers: view, restartCostSec: ctx.restartCostSec },
    (e) => lostWorkers(e, wall, grace),
    (ms) => ((ms - ctx.clock.originMs) * ctx.clock.scale) / 1000,
  );
  for (const f of outcome.failed) ctx.degrade(f.entry, 'plan', f.error);
  const out: Dispatch[] = [];
  for (const d of outcome.decided) {
    const { rec } = d.entry;
    ctx.heal(d.entry, 'plan');
    if (d.decision.action === 'wait' && !d.entry.current)
      [rec.phase, rec.reason] = ['waiting', d.decision.reason];
    if (d.actions.length > 0) out.push({ entry: d.entry, actions: d.actions, target: d.target });
  }
  return out;
}

function reservedFrom(capacity: Resources, free: Resources): Resources {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(capacity), ...Object.keys(free)]))
    out[k] = (capacity[k] ?? 0) - (free[k] ?? 0);
  return out;
}
