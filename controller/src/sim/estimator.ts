/**
 * Where a simulated scheduler's beliefs come from. Online: the runtime's own refit of what the
 * emulated sidecars logged, with the project's estimation models (nothing here). Oracle: the hidden
 * truth, optionally with a controlled relative error (paper Fig. 15), plugged into the runtime as a
 * model source where the fitted models would come from.
 */
import type { ConvergenceEstimate, ConvergenceRule, LossPoint } from '../models/convergence/types';
import type { SpeedModel, SpeedPrediction, SpeedSample, TrainingMode } from '../models/speed/types';
import type { ModelSource } from '../runtime/core';
import { hashedNormal } from './rng';
import type { SimTrainer } from './sim-trainer';

/** The estimation models the runtime fits with (the real ones are wired in `models.ts`). */
export interface EstimationModels {
  estimateConvergence(points: readonly LossPoint[], rule: ConvergenceRule): ConvergenceEstimate;
  fitSpeed(samples: readonly SpeedSample[], o: { mode: TrainingMode; globalBatch: number }): SpeedModel;
}

export const ESTIMATION_KINDS = ['online', 'oracle'] as const;
/**
 * Online, or the truth with a relative error; `knows` limits the oracle to one model (the other is
 * estimated online as usual), to measure what each estimate costs.
 */
export type Estimation =
  /**
   * `anonymous`: jobs do not declare their model, so none shares its measured speeds (ADR 0021).
   * `declaredEpochs`: a job of fixed work (a trace's `steps` or `epochs`) declares how much it will
   * train, so the runtime knows its remaining work (steps declared − steps done) and estimates only
   * its speed; jobs that train to convergence are estimated as usual.
   */
  | { readonly kind: 'online'; readonly anonymous?: boolean; readonly declaredEpochs?: boolean }
  | { readonly kind: 'oracle'; readonly error: number; readonly knows?: 'work' | 'speed' };

const point = (v: number): SpeedPrediction => ({ stepsPerSec: v, lower: v, upper: v });

/**
 * The truth of every job, with an error of exactly ±`error` per job on the remaining work and per
 * shape on the speed (random sign, fixed by the seed).
 */
export function oracleModels(
  trainers: ReadonlyMap<string, SimTrainer>,
  error: number,
  seed: number,
  knows?: 'work' | 'speed',
): ModelSource {
  const sign = (key: string, i: number): number => (hashedNormal(seed, key, i) >= 0 ? 1 : -1);
  return {
    of: (jobId, stepsDone) => {
      const t = trainers.get(jobId);
      if (!t) return null;
      const id = t.o.job.id;
      const workFactor = 1 + error * sign(`${id}:work`, 0);
      const steps = Math.max(t.totalSteps - stepsDone, 0) * workFactor;
      const speed: SpeedModel = {
        predict: (p, w) => point(t.speed.speed(p, w) * (1 + error * sign(`${id}:speed`, p * 1000 + w))),
      };
      const remaining = { steps, lower: steps, upper: steps };
      if (knows === 'work') return { remaining };
      if (knows === 'speed') return { speed };
      return { remaining, speed };
    },
  };
}

/** What jobs of fixed work declare (their total steps): the remaining work, exactly; nothing else. */
export function declaredWorkModels(trainers: ReadonlyMap<string, SimTrainer>): ModelSource {
  return {
    of: (jobId, stepsDone) => {
      const t = trainers.get(jobId);
      if (!t || t.o.job.work.kind === 'loss-curve') return null;
      const steps = Math.max(t.totalSteps - stepsDone, 0);
      return { remaining: { steps, lower: steps, upper: steps } };
    },
  };
}
