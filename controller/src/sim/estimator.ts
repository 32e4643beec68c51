/**
 * What the scheduler believes about one job. Online: only what sidecars would report (noisy loss points and
 * step times at shapes the job ran), refitted with the project's estimation models. Oracle: the truth.
 * Perturbed: the truth with a controlled relative error (paper Fig. 15).
 */
import type { ConvergenceEstimate, ConvergenceRule, LossPoint } from '../models/convergence/types';
import type { SpeedModel, SpeedPrediction, SpeedSample, TrainingMode } from '../models/speed/types';
import type { RemainingWork } from '../scheduling/types';
import { hashedNormal } from './rng';
import type { TrueSpeed } from './speed-truth';

/** The estimation models the online estimator uses (the real ones are wired in `models.ts`). */
export interface EstimationModels {
  estimateConvergence(points: readonly LossPoint[], rule: ConvergenceRule): ConvergenceEstimate;
  fitSpeed(samples: readonly SpeedSample[], o: { mode: TrainingMode; globalBatch: number }): SpeedModel;
}

export const ESTIMATION_KINDS = ['online', 'oracle'] as const;
export type Estimation = { readonly kind: 'online' } | { readonly kind: 'oracle'; readonly error: number };

/** A job's belief: updated with observations, queried each round. */
export interface JobEstimator {
  addLoss(points: readonly LossPoint[]): void;
  addSpeed(sample: SpeedSample): void;
  remaining(stepsDone: number): RemainingWork;
  speed(): SpeedModel;
  /** The latest convergence estimate (online only), for plots. */
  lastEstimate(): ConvergenceEstimate | null;
}

/** Facts about a job the estimator may use: the user's rule and the hidden truth (oracle only). */
export interface EstimatorJob {
  readonly id: string;
  readonly mode: TrainingMode;
  readonly globalBatch: number;
  readonly rule: ConvergenceRule;
  readonly trueTotalSteps: number;
  readonly trueSpeed: TrueSpeed;
  /** Jobs without loss data yet are assumed to need this many epochs (a cluster-wide prior). */
  readonly priorEpochs: number;
}

const point = (v: number): SpeedPrediction => ({ stepsPerSec: v, lower: v, upper: v });

function oracle(job: EstimatorJob, error: number, seed: number): JobEstimator {
  // An error of exactly ±error per job on the remaining work and per shape on the speed (random sign).
  const sign = (key: string, i: number): number => (hashedNormal(seed, key, i) >= 0 ? 1 : -1);
  const workFactor = 1 + error * sign(`${job.id}:work`, 0);
  const speedFactor = (p: number, w: number): number => 1 + error * sign(`${job.id}:speed`, p * 1000 + w);
  return {
    addLoss: () => undefined,
    addSpeed: () => undefined,
    remaining: (done) => {
      const steps = Math.max(job.trueTotalSteps - done, 0) * workFactor;
      return { steps, lower: steps, upper: steps };
    },
    speed: () => ({ predict: (p, w) => point(job.trueSpeed(p, w) * speedFactor(p, w)) }),
    lastEstimate: () => null,
  };
}

interface ShapeStats {
  ps: number;
  workers: number;
  /** Weighted sum of observed step rates and of weights. */
  rateSum: number;
  weight: number;
}

function online(job: EstimatorJob, models: EstimationModels): JobEstimator {
  const points: LossPoint[] = [];
  const shapes = new Map<string, ShapeStats>();
  let estimate: ConvergenceEstimate | null = null;
  let lossDirty = false;
  let model: SpeedModel | null = null;
  return {
    addLoss: (ps) => {
      if (ps.length === 0) return;
      points.push(...ps);
      lossDirty = true;
    },
    addSpeed: (s) => {
      const key = `${s.ps}x${s.workers}`;
      const st = shapes.get(key) ?? { ps: s.ps, workers: s.workers, rateSum: 0, weight: 0 };
      const w = s.weight ?? 1;
      st.rateSum += s.stepsPerSec * w;
      st.weight += w;
      shapes.set(key, st);
      model = null;
    },
    remaining: (done) => {
      if (lossDirty) {
        estimate = models.estimateConvergence(points, job.rule);
        lossDirty = false;
      }
      const floor = job.rule.stepsPerEpoch * 0.25;
      if (estimate?.status !== 'ok') {
        const steps = Math.max(job.priorEpochs * job.rule.stepsPerEpoch - done, floor);
        return { steps, lower: floor, upper: steps * 3 };
      }
      // The estimate says "converged" before the truth does: the job keeps running, assume a little more.
      const steps = Math.max(estimate.predictedTotalSteps - done, floor);
      return {
        steps,
        lower: Math.max(estimate.lower - done, floor),
        upper: Math.max(estimate.upper - done, steps),
      };
    },
    speed: () => {
      if (model) return model;
      const samples = [...shapes.values()].map((s) => ({
        ps: s.ps,
        workers: s.workers,
        stepsPerSec: s.rateSum / s.weight,
        weight: s.weight,
      }));
      model = models.fitSpeed(samples, { mode: job.mode, globalBatch: job.globalBatch });
      return model;
    },
    lastEstimate: () => estimate,
  };
}

/** Creates the estimator of one job. */
export function createEstimator(o: {
  job: EstimatorJob;
  estimation: Estimation;
  models: EstimationModels;
  seed: number;
}): JobEstimator {
  return o.estimation.kind === 'oracle' ? oracle(o.job, o.estimation.error, o.seed) : online(o.job, o.models);
}
