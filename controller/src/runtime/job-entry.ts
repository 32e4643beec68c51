/** One job inside the runtime: its record, its observations and its latest models. */
import type { JobPlan } from '../../../shared/src/schemas';
import type { JobReport } from './backend';
import { roundSec, type Clock } from './clock';
import type { JobRecord } from './job-record';
import { shapeHistory } from './job-record';
import type { JobObservations } from './observations';
import { remainingTime, type JobModels } from './refit';

export interface JobEntry {
  readonly rec: JobRecord;
  readonly obs: JobObservations;
  models: JobModels | null;
}

/** The retained `plan` message of a job: its shape, placement and predicted completion. */
export function planMessage(e: JobEntry, clock: Clock): JobPlan {
  const { rec, models } = e;
  const shape = rec.current?.shape ?? null;
  const rt = shape && models && rec.phase === 'running' ? remainingTime(models, shape) : null;
  const speed = shape && models ? models.speed.predict(shape.ps, shape.workers).stepsPerSec : null;
  return {
    v: 1,
    ts: clock.wallMs(),
    state: planState(e),
    ps: shape?.ps ?? 0,
    workers: shape?.workers ?? 0,
    placement: rec.current?.placement.map((p) => ({ ...p })) ?? [],
    reason: rec.reason,
    predictedRemainingSec: rt && {
      value: roundSec(rt.value),
      lower: roundSec(rt.lower),
      upper: roundSec(rt.upper),
    },
    predictedCompletionTs: rt
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

function planState(e: JobEntry): JobPlan['state'] {
  switch (e.rec.phase) {
    case 'pending':
      return 'pending';
    case 'pre-run':
      return 'pre-run';
    case 'waiting':
      return 'waiting';
    case 'done':
      return 'done';
    case 'failed':
      return 'failed';
    case 'running':
      return e.rec.current ? 'running' : 'resizing';
  }
}

/** The API's view of one job. */
export function jobView(e: JobEntry, clock: Clock): Record<string, unknown> {
  const { rec, obs } = e;
  return {
    id: `${rec.spec.namespace}/${rec.spec.name}`,
    namespace: rec.spec.namespace,
    name: rec.spec.name,
    mode: rec.spec.mode,
    phase: rec.phase,
    reason: rec.reason,
    shape: rec.current?.shape ?? null,
    placement: rec.current?.placement ?? [],
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
          }
        : { status: c.status, reason: c.reason ?? null },
    speedFitted: models.speedFitted,
    remaining: models.remaining,
  };
}

/**
 * What a backend may show of a job after a round. Progress needs a converged fit (the fallback
 * remaining-work guess is no basis for a percentage); a finished job is at 100 %.
 */
export function jobReport(e: JobEntry, clock: Clock): JobReport {
  const { rec, models } = e;
  const done = models?.stepsDone ?? 0;
  const total = models ? done + models.remaining.steps : 0;
  const progress =
    rec.phase === 'done'
      ? 1
      : models?.convergence.status === 'ok' && total > 0
        ? Math.min(1, done / total)
        : null;
  return {
    jobId: `${rec.spec.namespace}/${rec.spec.name}`,
    phase: rec.phase,
    progress,
    predictedCompletionMs: planMessage(e, clock).predictedCompletionTs?.value ?? null,
    models: modelsView(e),
  };
}
