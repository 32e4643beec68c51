/** One job inside the runtime: its record, its observations and its latest models. */
import type { JobPlan } from '../../../shared/src/schemas';
import type { JobReport, ObservedJob } from './backend';
import type { CurrentJob } from './core';
import { roundSec, type Clock } from './clock';
import type { JobRecord } from './job-record';
import { shapeHistory } from './job-record';
import { jobState, type JobState } from './job-state';
import type { JobObservations } from './observations';
import { remainingTime, type JobModels } from './refit';
import { apiPhase, isInFlight } from './rollout/in-flight';
import { restartCostView } from './rollout/restart-cost';

/** What a view of a job needs besides the job: the clock, and the restart-cost prior. */
export interface ViewContext {
  readonly clock: Clock;
  /** Job seconds a restart is assumed to cost the job until one was measured. */
  readonly restartPriorSec: number;
}

export interface JobEntry {
  readonly rec: JobRecord;
  readonly obs: JobObservations;
  /** The latest good models (a failed refit keeps them). */
  models: JobModels | null;
  /** What the backend observed of the job at the last round (never a belief). */
  observed: ObservedJob | undefined;
  /** What the job holds according to that observation. */
  current: CurrentJob | null;
  /** The observation version the models were fitted on (refit only when it moved). */
  fittedAt: string | null;
  /** The completed epochs the convergence rule was last checked at in a round. */
  ruleCheckedAt: number;
  /** The last completed epoch the rule was checked at between rounds. */
  epochChecked: number;
  /** An ended job whose end the backend recorded and of which nothing runs (as last observed). */
  wound: boolean;
  /** The latest status each task's sidecar published (`worker/0` → online, done or lost). */
  readonly sidecars: Map<string, { readonly state: string; readonly ts: number }>;
}

/** How long a worker's sidecar must have been `lost` (wall ms) before the worker is replaced. */
export const LOST_SIDECAR_GRACE_MS = 60_000;

/**
 * Workers of the job's current shape whose sidecar's Last Will said `lost` at least `graceMs` ago
 * while the backend still runs the task: nothing is known of them any more, so the policy treats
 * them like stragglers (the replacement restarts the task and its sidecar).
 */
export function lostWorkers(e: JobEntry, nowMs: number, graceMs: number): number[] {
  const running = new Set(
    (e.observed?.tasks ?? []).filter((t) => t.role === 'worker' && t.state === 'running').map((t) => t.index),
  );
  const out: number[] = [];
  for (const [key, s] of e.sidecars) {
    const [role, index] = key.split('/');
    const i = Number(index);
    if (role === 'worker' && s.state === 'lost' && running.has(i) && nowMs - s.ts >= graceMs) out.push(i);
  }
  return out.sort((a, b) => a - b);
}

/**
 * A job's persisted record with what it holds as last observed, and whether a rollout of it is in
 * flight (read-only views: dashboard, metrics; `apiPhase` turns the two into what to show).
 */
export type ObservedRecord = JobRecord & { readonly current: CurrentJob | null; readonly inFlight: boolean };

/** A new entry: nothing observed or fitted yet. */
export const newEntry = (rec: JobRecord, obs: JobObservations): JobEntry => ({
  rec,
  obs,
  models: null,
  observed: undefined,
  current: null,
  fittedAt: null,
  ruleCheckedAt: -1,
  epochChecked: -1,
  wound: false,
  sidecars: new Map(),
});

/** The retained `plan` message of a job: its shape, placement and predicted completion. */
export function planMessage(e: JobEntry, clock: Clock): JobPlan {
  const { rec, models } = e;
  // An ended job runs nothing (whatever is still being stopped): its plan says so.
  const over = rec.phase === 'done' || rec.phase === 'failed';
  const shape = over ? null : (e.current?.shape ?? null);
  const done = rec.phase === 'done';
  const rt = done
    ? { value: 0, lower: 0, upper: 0 }
    : shape && models && rec.phase === 'running'
      ? remainingTime(models, shape)
      : null;
  const speed = shape && models ? models.speed.predict(shape.ps, shape.workers).stepsPerSec : null;
  // A finished job completed when it finished, not "now + 0".
  const endedAt = done && rec.finishedAt !== null ? clock.wallMsAfter(rec.finishedAt - clock.now()) : null;
  return {
    v: 1,
    ts: clock.wallMs(),
    state: planState(e),
    ps: shape?.ps ?? 0,
    workers: shape?.workers ?? 0,
    placement: over ? [] : (e.current?.placement.map((p) => ({ ...p })) ?? []),
    reason: rec.reason,
    predictedRemainingSec: rt && {
      value: roundSec(rt.value),
      lower: roundSec(rt.lower),
      upper: roundSec(rt.upper),
    },
    predictedCompletionTs:
      endedAt !== null
        ? { value: endedAt, lower: endedAt, upper: endedAt }
        : rt
          ? {
              value: clock.wallMsAfter(rt.value),
              lower: clock.wallMsAfter(rt.lower),
              upper: clock.wallMsAfter(rt.upper),
            }
          : null,
    stepsPerSec: speed !== null && Number.isFinite(speed) ? Math.max(0, speed) : null,
    remainingSteps: models && rec.phase !== 'done' ? models.remaining.steps : rec.phase === 'done' ? 0 : null,
  };
}

/**
 * The job's {@link jobState}: `resizing` while its rollout is in flight (observed ≠ target, ADR 0035)
 * or while it is scheduled to run and nothing of it runs yet.
 */
export const entryState = (e: JobEntry): JobState =>
  jobState(e.rec.phase, { holds: e.current !== null, rolloutInFlight: isInFlight(e) });

/** The retained plan says what was last observed (it is published when that changes). */
const planState = (e: JobEntry): JobPlan['state'] => entryState(e);

/** The API's view of one job. */
export function jobView(e: JobEntry, ctx: ViewContext): Record<string, unknown> {
  const { rec, obs } = e;
  const { clock } = ctx;
  return {
    id: `${rec.spec.namespace}/${rec.spec.name}`,
    namespace: rec.spec.namespace,
    name: rec.spec.name,
    mode: rec.spec.mode,
    demand: { ps: rec.spec.psDemand, worker: rec.spec.workerDemand },
    limits: {
      minPs: rec.spec.minPs,
      maxPs: rec.spec.maxPs,
      minWorkers: rec.spec.minWorkers,
      maxWorkers: rec.spec.maxWorkers,
    },
    phase: apiPhase(rec.phase, isInFlight(e)),
    state: entryState(e),
    reason: rec.reason,
    shape: e.current?.shape ?? null,
    placement: e.current?.placement ?? [],
    end: rec.end,
    degraded: rec.degraded,
    sidecars: Object.fromEntries([...e.sidecars].map(([task, st]) => [task, st.state])),
    restarts: rec.restarts,
    shapes: shapeHistory(rec),
    submittedAt: rec.submittedAt,
    finishedAt: rec.finishedAt,
    jct: rec.finishedAt === null ? null : roundSec(rec.finishedAt - rec.submittedAt),
    observations: {
      records: obs.records,
      lossPoints: obs.lossPoints().length,
      stepsDone: obs.stepsDone(),
      speedShapes: obs.speedSamples(rec.spans),
    },
    models: modelsView(e),
    plan: planMessage(e, clock),
    target: targetView(e),
    restartCost: restartCostView(rec.restartCost, ctx.restartPriorSec, clock.scale),
  };
}

/** The job's target as the API shows it (generation, shape, placement, whether it is reached). */
function targetView(e: JobEntry): Record<string, unknown> | null {
  const t = e.rec.target;
  if (!t) return null;
  return {
    generation: t.generation,
    tasks: t.tasks.map((x) => ({ ...x })),
    inFlight: isInFlight(e),
    sinceMs: t.sinceMs,
    deadlineMs: t.deadlineMs,
    reachedAtMs: t.reachedAtMs ?? null,
    ...(t.end ? { end: t.end } : {}),
    ...(t.reason !== undefined ? { reason: t.reason } : {}),
    ...(t.givenUp !== undefined ? { givenUp: t.givenUp } : {}),
  };
}

/** The fitted models of a job in a small, JSON-ready form; null before the first fit. */
function modelsView(e: JobEntry): Record<string, unknown> | null {
  const { models } = e;
  if (!models) return null;
  const c = models.convergence;
  return {
    convergence:
      c.status === 'ok'
        ? {
            status: 'ok',
            predictedTotalSteps: c.predictedTotalSteps,
            lower: c.lower,
            upper: c.upper,
            beta: c.beta,
            fitStartStep: c.fitStartStep ?? 0,
            ...(c.exponential === undefined ? {} : { exponential: c.exponential }),
          }
        : { status: c.status, reason: c.reason ?? null },
    speedFitted: models.speedFitted,
    remaining: models.remaining,
  };
}

/** Fraction of the predicted total steps done (1 once done); null without a converged fit. */
export function progressOf(e: JobEntry): number | null {
  const { rec, models } = e;
  const done = models?.stepsDone ?? 0;
  const total = models ? done + models.remaining.steps : 0;
  if (rec.phase === 'done') return 1;
  return models?.convergence.status === 'ok' && total > 0 ? Math.min(1, done / total) : null;
}

/**
 * What a backend may show of a job after a round. Progress needs a converged fit (the fallback
 * remaining-work guess is no basis for a percentage); a finished job is at 100 %.
 */
export function jobReport(e: JobEntry, ctx: ViewContext): JobReport {
  const { rec } = e;
  const { clock } = ctx;
  const progress = progressOf(e);
  return {
    jobId: `${rec.spec.namespace}/${rec.spec.name}`,
    phase: apiPhase(rec.phase, isInFlight(e)),
    current: e.current,
    target: rec.target,
    restarts: rec.restarts,
    end: rec.end,
    reason: rec.reason,
    degraded: rec.degraded,
    restartCost: restartCostView(rec.restartCost, ctx.restartPriorSec, clock.scale),
    progress,
    predictedCompletionMs: planMessage(e, clock).predictedCompletionTs?.value ?? null,
    models: modelsView(e),
  };
}
