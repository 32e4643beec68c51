/**
 * Refit: from a job's observations to its models, remaining work and predictions. Pure.
 */
import type { ConvergenceEstimate } from '../models/convergence/types';
import type { SpeedModel, SpeedPrediction } from '../models/speed/types';
import type { JobShape, RemainingWork } from '../scheduling/types';
import type { Core } from './core';
import type { JobRecord } from './job-record';
import type { JobObservations } from './observations';

/** Distinct shapes observed before the speed model counts as fitted. */
export const MIN_FIT_SHAPES = 3;

export interface JobModels {
  readonly convergence: ConvergenceEstimate;
  /** The fitted speed model, or a flat fallback when nothing could be fitted yet. */
  readonly speed: SpeedModel;
  readonly speedFitted: boolean;
  readonly remaining: RemainingWork;
  readonly stepsDone: number;
  readonly speedSamples: number;
}

/** Predicted remaining job seconds at a shape, with an interval. */
export interface RemainingTime {
  readonly value: number;
  readonly lower: number;
  readonly upper: number;
}

export function refitJob(core: Core, rec: JobRecord, obs: JobObservations): JobModels {
  const spec = rec.spec;
  const stepsDone = obs.stepsDone();
  const convergence = core.estimateConvergence(obs.lossPoints(), {
    stepsPerEpoch: spec.stepsPerEpoch,
    threshold: spec.convergence.threshold,
    patience: spec.convergence.patience,
  });
  const samples = obs.speedSamples(rec.spans);
  const fitted =
    samples.length > 0 ? core.fitSpeed(samples, { mode: spec.mode, globalBatch: spec.batchSize }) : null;
  return {
    convergence,
    speed: fitted ?? flatSpeed(samples.map((s) => s.stepsPerSec)),
    // Fewer distinct shapes than that cannot tell the model's terms apart (paper: 5–10 sample runs).
    speedFitted: fitted !== null && samples.length >= MIN_FIT_SHAPES,
    remaining: remainingWork(convergence, spec.maxEpochs * spec.stepsPerEpoch, stepsDone),
    stepsDone,
    speedSamples: samples.length,
  };
}

/** Remaining steps: from the convergence fit, else from the user's epoch bound with a wide interval. */
export function remainingWork(c: ConvergenceEstimate, priorTotal: number, done: number): RemainingWork {
  if (c.status === 'ok') {
    return {
      steps: c.remainingSteps,
      lower: Math.max(0, c.lower - done),
      upper: Math.max(c.remainingSteps, c.upper - done),
    };
  }
  const rest = Math.max(0, priorTotal - done);
  return { steps: rest / 2, lower: 0, upper: rest };
}

/** Before any fit: the mean observed speed at every shape (or 1 step/s), with a wide interval. */
export function flatSpeed(observed: readonly number[]): SpeedModel {
  const mean = observed.length > 0 ? observed.reduce((a, b) => a + b, 0) / observed.length : 1;
  const p: SpeedPrediction = { stepsPerSec: mean, lower: mean / 2, upper: mean * 2 };
  return { predict: () => p };
}

/** Remaining job seconds at `shape`; the interval combines the work and speed intervals. */
export function remainingTime(m: JobModels, shape: JobShape): RemainingTime | null {
  if (shape.ps < 1 || shape.workers < 1) return null;
  const s = m.speed.predict(shape.ps, shape.workers);
  if (!(s.stepsPerSec > 0)) return null;
  const safe = (steps: number, speed: number) => (speed > 0 ? steps / speed : steps / s.stepsPerSec);
  return {
    value: m.remaining.steps / s.stepsPerSec,
    lower: safe(m.remaining.lower, s.upper),
    upper: safe(m.remaining.upper, s.lower),
  };
}
