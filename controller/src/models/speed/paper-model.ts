/**
 * The paper's speed model, kept as the baseline: Eq. 4 (sync) / Eq. 3 (async), all θ ≥ 0, fitted by
 * NNLS (`ml-fcnnls`) on step times, unweighted, exactly as §3.2 describes.
 */
import { fcnnlsVector } from 'ml-fcnnls';
import { featureRow, paperFeatureSet, speedOf, stepTimeOf } from './features';
import { checkSamples, checkShape } from './samples';
import type { SpeedModel, SpeedSample, TrainingMode } from './types';

export interface SpeedFitOptions {
  readonly mode: TrainingMode;
  /** Global batch M of a synchronous job; optional (θ0 absorbs it when unknown). */
  readonly globalBatch?: number | undefined;
}

/** z of a two-sided 90% interval. */
const Z90 = 1.645;
/** Log-scale spread assumed when the samples cannot estimate one (fewer samples than terms). */
const UNKNOWN_LOG_SPREAD = 0.5;

/** A fitted paper model plus its coefficients (θ in the order of the paper's equation). */
export interface PaperSpeedModel extends SpeedModel {
  readonly theta: readonly number[];
}

/**
 * Fits paper Eq. 4 (sync) or Eq. 3 (async) by NNLS on step time.
 * @example fitPaperSpeedModel(samples, { mode: 'sync', globalBatch: 32 }).predict(4, 8).stepsPerSec
 */
export function fitPaperSpeedModel(samples: readonly SpeedSample[], opts: SpeedFitOptions): PaperSpeedModel {
  checkSamples(samples);
  if (samples.length === 0) throw new RangeError('fitPaperSpeedModel: at least one speed sample is needed');
  const set = paperFeatureSet(opts.mode);
  const batch = opts.globalBatch ?? 1;
  const rows = samples.map((s) => Array.from(featureRow(set, s.ps, s.workers, batch)));
  const targets = samples.map((s) => stepTimeOf(opts.mode, s.stepsPerSec, s.workers));
  const theta = fcnnlsVector(rows, targets)
    .K.to1DArray()
    .map((v) => Math.max(0, v));
  const stepTime = (ps: number, workers: number): number =>
    featureRow(set, ps, workers, batch).reduce((acc, x, i) => acc + x * (theta[i] as number), 0);
  const active = theta.filter((v) => v > 0).length;
  const logResiduals = samples.map((s, i) =>
    Math.log((targets[i] as number) / Math.max(stepTime(s.ps, s.workers), 1e-300)),
  );
  const dof = samples.length - active;
  const spread =
    dof > 0
      ? Math.sqrt(logResiduals.reduce((a, r) => a + r * r, 0) / dof) * Math.sqrt(1 + active / samples.length)
      : UNKNOWN_LOG_SPREAD;
  return {
    theta,
    predict(ps, workers) {
      checkShape(ps, workers);
      const f = speedOf(opts.mode, Math.max(stepTime(ps, workers), 1e-300), workers);
      const half = Z90 * Math.max(spread, 0.01);
      return { stepsPerSec: f, lower: f * Math.exp(-half), upper: f * Math.exp(half) };
    },
  };
}
