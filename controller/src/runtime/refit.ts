/**
 * Refit: from a job's observations to its models, remaining work and predictions. Pure.
 */
import { priorRemaining } from '../models/convergence/prior';
import type { ConvergenceEstimate } from '../models/convergence/types';
import type { SpeedModel, SpeedPrediction, SpeedSample } from '../models/speed/types';
import type { JobShape, RemainingWork } from '../scheduling/types';
import type { Core } from './core';
import type { JobRecord } from './job-record';
import { jobIdOf } from './job-spec';
import type { JobObservations } from './observations';

/** Distinct shapes observed before the speed model counts as fitted. */
export const MIN_FIT_SHAPES = 3;

export interface JobModels {
  readonly convergence: ConvergenceEstimate;
  /** What the fits were made on, so the next refit can keep a fit its data has not outgrown. */
  readonly basis?: FitBasis;
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

/**
 * What a job's fits were made on. A fit is redone when its data grew enough to change it: the loss
 * history by a tenth (at least a few points), the speed samples by a new shape or a quarter more
 * weight — not on every record, which would only repeat the same fit (the refits dominate a
 * round's cost at scale).
 */
export interface FitBasis {
  readonly lossPoints: number;
  readonly shapes: number;
  readonly speedWeight: number;
}

const LOSS_GROWTH = 0.1;
const MIN_NEW_POINTS = 4;
const WEIGHT_GROWTH = 0.25;

const lossStale = (prev: FitBasis | undefined, points: number): boolean =>
  !prev || points - prev.lossPoints >= Math.max(MIN_NEW_POINTS, LOSS_GROWTH * prev.lossPoints);

const speedStale = (prev: FitBasis | undefined, shapes: number, weight: number): boolean =>
  !prev || shapes !== prev.shapes || weight > prev.speedWeight * (1 + WEIGHT_GROWTH);

export function refitJob(
  core: Core,
  rec: JobRecord,
  obs: JobObservations,
  prev?: JobModels | null,
  /** Other jobs' speeds, one sample per shape (see `speed-peers.ts`). */
  peerSamples: readonly SpeedSample[] = [],
): JobModels {
  const spec = rec.spec;
  const stepsDone = obs.stepsDone();
  // A model source may know both models (the oracle), one of them (to measure what each estimate costs), or none.
  const given = core.models?.of(jobIdOf(spec), stepsDone);
  const knownWork = given?.remaining;
  const knownSpeed = given?.speed;
  if (knownWork && knownSpeed) {
    return givenModels(
      { remaining: knownWork, speed: knownSpeed },
      stepsDone,
      obs.speedSamples(rec.spans).length,
    );
  }
  const points = obs.lossPoints();
  const basis = prev?.basis;
  const convergence = knownWork
    ? givenConvergence(knownWork, stepsDone)
    : lossStale(basis, points.length)
      ? core.estimateConvergence(points, {
          stepsPerEpoch: spec.stepsPerEpoch,
          threshold: spec.convergence.threshold,
          patience: spec.convergence.patience,
        })
      : prev!.convergence;
  const samples = withPeers(obs.speedSamples(rec.spans), peerSamples);
  const weight = samples.reduce((a, s) => a + (s.weight ?? 1), 0);
  let speed = knownSpeed ?? prev?.speed;
  let speedFitted = knownSpeed !== undefined || (prev?.speedFitted ?? false);
  if (!speed || (!knownSpeed && speedStale(basis, samples.length, weight))) {
    const fitted =
      samples.length > 0 ? core.fitSpeed(samples, { mode: spec.mode, globalBatch: spec.batchSize }) : null;
    speed = fitted ?? flatSpeed(samples.map((s) => s.stepsPerSec));
    // Fewer distinct shapes than that cannot tell the model's terms apart (paper: 5–10 sample runs).
    speedFitted = fitted !== null && samples.length >= MIN_FIT_SHAPES;
  }
  const keepLoss = convergence === prev?.convergence;
  const keepSpeed = speed === prev?.speed;
  return {
    convergence,
    basis: {
      lossPoints: keepLoss && basis ? basis.lossPoints : points.length,
      shapes: keepSpeed && basis ? basis.shapes : samples.length,
      speedWeight: keepSpeed && basis ? basis.speedWeight : weight,
    },
    speed,
    speedFitted,
    remaining: knownWork ?? remainingWork(convergence, spec.maxEpochs * spec.stepsPerEpoch, stepsDone),
    stepsDone,
    speedSamples: samples.length,
  };
}

/** A known remaining work in the shape a convergence fit produces. */
function givenConvergence(r: RemainingWork, stepsDone: number): ConvergenceEstimate {
  return {
    status: 'ok',
    predictedTotalSteps: stepsDone + r.steps,
    lower: stepsDone + r.lower,
    upper: stepsDone + r.upper,
    remainingSteps: r.steps,
    beta: [0, 0, 0],
    converged: r.steps <= 0,
  };
}

/** Models handed in by a {@link ModelSource} (the oracle), in the shape a fit produces. */
function givenModels(
  given: { readonly remaining: RemainingWork; readonly speed: SpeedModel },
  stepsDone: number,
  speedSamples: number,
): JobModels {
  const r = given.remaining;
  const convergence = givenConvergence(r, stepsDone);
  return { convergence, speed: given.speed, speedFitted: true, remaining: r, stepsDone, speedSamples };
}

/** Remaining steps: from the convergence fit, else from the user's epoch bound with a wide interval. */
export function remainingWork(c: ConvergenceEstimate, priorTotal: number, done: number): RemainingWork {
  if (c.status === 'ok') {
    // From the steps done now, not when the curve was fitted (a kept fit ages between refits).
    const steps = Math.max(0, c.predictedTotalSteps - done);
    return {
      steps,
      lower: Math.max(0, c.lower - done),
      upper: Math.max(steps, c.upper - done),
    };
  }
  return priorRemaining(priorTotal, done);
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

/**
 * The job's own speed samples, plus its peers' (one per shape, pooled by `SpeedPeers`) at shapes it
 * has not run: the job's own measurement of a shape wins, since its placement and stragglers are its own.
 */
function withPeers(own: readonly SpeedSample[], peers: readonly SpeedSample[]): readonly SpeedSample[] {
  if (peers.length === 0) return own;
  const mine = new Set(own.map((s) => `${s.ps}x${s.workers}`));
  return [...own, ...peers.filter((s) => !mine.has(`${s.ps}x${s.workers}`))];
}
