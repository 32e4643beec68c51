/**
 * The speed model Optimus uses: better than the paper's single Eq. 3/4 fit on real data.
 * 1. Relative-error NNLS: rows weighted by 1/t so every shape counts by its relative miss.
 * 2. Several candidate laws (the paper law, with the per-PS term 1/p, without p, both), each fitted
 *    plain and with a small ridge (see RIDGES), each cross-validated; predictions averaged in log
 *    space with AIC-style weights (see lawWeights): with few samples the laws share the vote (less variance than
 *    betting on one), with many the law that predicts held-out shapes best dominates — and on data
 *    that follow a law exactly, that law takes (almost) all the weight.
 * 3. Robustness: with ≥ 8 samples, a sample whose held-out miss is far outside the others' (a failed
 *    or disturbed measurement) is dropped once and the laws refitted.
 * 4. Residual smoothing over nearby shapes (see residual-kernel.ts): the blend with interpolation.
 * 5. A 90% prediction interval from the cross-validated log errors (wide when samples are few).
 */
import { candidateFeatureSets, speedOf, stepTimeOf, type FeatureSet } from './features';
import { fitCandidates, MIN_CV_ROWS, stepTimeAt, type CandidateFit, type FitRow } from './candidate-fit';
import type { SpeedFitOptions } from './paper-model';
import {
  DEFAULT_RESIDUAL_KERNEL,
  residualCorrection,
  type ResidualKernelOptions,
  type ResidualPoint,
} from './residual-kernel';
import { checkSamples, checkShape } from './samples';
import { ScratchArena } from '../scratch-arena';
import { reweightDesign, sharedDesign, type SharedDesign } from './shared-design';
import type { SpeedModel, SpeedSample } from './types';

/** One law of the ensemble, for inspection (`--json` outputs, debugging). */
export interface FittedLaw {
  readonly features: FeatureSet;
  /** Ridge of this variant (0 = plain NNLS). */
  readonly ridge: number;
  readonly theta: readonly number[];
  readonly weight: number;
  /** Cross-validated mean squared log error (NaN without CV). */
  readonly cvError: number;
}

export interface BestSpeedModel extends SpeedModel {
  readonly laws: readonly FittedLaw[];
  /** Log-scale spread behind the interval. */
  readonly logSpread: number;
  /** Indices of samples dropped as outliers. */
  readonly dropped: readonly number[];
}

/** Options of {@link fitSpeedModel}; the extras exist to compare variants (tests, `eval`). */
export interface BestFitOptions extends SpeedFitOptions {
  /** Candidate laws (default {@link candidateFeatureSets} of the mode). */
  readonly laws?: readonly FeatureSet[] | undefined;
  /** Smoothing of residuals over nearby shapes; false = the laws alone. */
  readonly residualKernel?: ResidualKernelOptions | false | undefined;
}

const Z90 = 1.645;
/** Spread when there are too few samples to cross-validate: the interval spans ×/÷ 2.3. */
const PRIOR_LOG_SPREAD = 0.5;
const MIN_LOG_SPREAD = 0.02;
const ROBUST_MIN_SAMPLES = 8;
const TEMPER = 16;
/**
 * Every law is fitted twice: plain NNLS, and with a small ridge on its column-normalised relative
 * coefficients (Tikhonov). With few samples, the design is ill-conditioned and plain NNLS jumps to a
 * sparse vertex that extrapolates badly; the ridge spreads the fit over correlated terms. Its pull
 * fades as samples accumulate (the Gram diagonal grows like n), and cross-validation weighs the two
 * variants — on data that follow a law exactly, the plain fit wins.
 */
const RIDGES = [0, 0.1] as const;
const PLAIN = [0] as const;
/** Beyond this many samples the ridge's pull (≈ 0.1 / n) is negligible: skip the variant, halve the work. */
const RIDGE_MAX_SAMPLES = 20;
const OCCAM = 1;
/**
 * Scratch memory of the fits (design, Gram matrices, residual vectors): reset at the start of every
 * `fitSpeedModel`, which is synchronous and keeps none of it in the model it returns.
 */
const arena = new ScratchArena();
const takeScratch = (length: number): Float64Array => arena.take(length);
/** An outlier misses its held-out prediction by more than this many robust standard deviations AND by more than ×/÷ 2. */
const OUTLIER_SIGMAS = 6;
const OUTLIER_MIN_LOG = Math.log(2);

/**
 * AIC-style model averaging with cross-validated errors in place of the in-sample fit:
 * weight ∝ (best CV error / own CV error)^(n / TEMPER) · e^(−OCCAM · terms). The tempered
 * likelihood keeps the vote shared when samples are few; each extra term costs a factor e (as AIC).
 */
function lawWeights(fits: readonly CandidateFit[], n: number): number[] {
  const errors = fits.map((f) => f.cvError);
  const cvKnown = errors.every((e) => Number.isFinite(e));
  const best = Math.max(Math.min(...errors), 1e-12);
  const raw = fits.map(
    (f, i) =>
      (cvKnown ? (best / Math.max(errors[i] as number, 1e-12)) ** (n / TEMPER) : 1) *
      Math.exp(-OCCAM * f.set.length),
  );
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((r) => r / total);
}

function ensembleLogStepTime(
  fits: readonly Pick<CandidateFit, 'set' | 'theta'>[],
  weights: readonly number[],
  ps: number,
  workers: number,
  batch: number,
): number {
  let acc = 0;
  fits.forEach(
    (f, i) =>
      (acc +=
        (weights[i] as number) * Math.log(Math.max(stepTimeAt(f.set, f.theta, ps, workers, batch), 1e-300))),
  );
  return acc;
}

/** Index of the one sample to drop as an outlier, or -1. */
function outlierOf(
  fits: readonly CandidateFit[],
  weights: readonly number[],
  rows: readonly FitRow[],
): number {
  const n = rows.length;
  if (n < ROBUST_MIN_SAMPLES) return -1;
  const miss = arena.take(n);
  let worst = 0;
  for (let i = 0; i < n; i++) {
    let acc = 0;
    for (let s = 0; s < fits.length; s++)
      acc += (weights[s] as number) * ((fits[s] as CandidateFit).cvResiduals[i] as number);
    miss[i] = Math.abs(acc);
    if ((miss[i] as number) > (miss[worst] as number)) worst = i;
  }
  const m = miss[worst] as number;
  // Typed-array sort is numeric and comparator-free (the miss values are finite and ≥ 0).
  const scale = 1.4826 * medianInPlace(miss);
  return m > OUTLIER_MIN_LOG && m > OUTLIER_SIGMAS * scale ? worst : -1;
}

/** Median of a non-empty array, sorting it in place (same interpolation as `median`). */
function medianInPlace(values: Float64Array): number {
  values.sort();
  const pos = (values.length - 1) / 2;
  const lo = Math.floor(pos);
  const a = values[lo] as number;
  return a + ((values[Math.ceil(pos)] as number) - a) * (pos - lo);
}

/** Fits every law on `rows`; the design over all the laws' columns is built once (and reused by the refit). */
function fitAll(
  sets: readonly FeatureSet[],
  rows: readonly FitRow[],
  shared: SharedDesign,
): { fits: CandidateFit[]; weights: number[] } {
  const used = rows.filter((r) => r.scale > 0).length;
  const ridges = used <= RIDGE_MAX_SAMPLES ? RIDGES : PLAIN;
  const fits = sets.flatMap((set) => fitCandidates(set, rows, 0, ridges, shared, takeScratch));
  return { fits, weights: lawWeights(fits, used) };
}

/** Each row's log miss of the ensemble, for the residual smoothing. */
function residualPoints(
  rows: readonly FitRow[],
  fits: readonly CandidateFit[],
  weights: readonly number[],
): ResidualPoint[] {
  const points: ResidualPoint[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as FitRow;
    let acc = 0;
    for (let s = 0; s < fits.length; s++)
      acc += (weights[s] as number) * ((fits[s] as CandidateFit).logFitted[i] as number);
    points.push({
      lnPs: Math.log(r.ps),
      lnWorkers: Math.log(r.workers),
      residual: Math.log(r.stepTime) - acc,
      weight: r.scale * r.scale,
    });
  }
  return points;
}

/**
 * Fits the best speed model to the samples of one job. Needs ≥ 1 sample; with fewer than 3 the
 * laws are averaged blindly and the interval is wide.
 * @example fitSpeedModel(samples, { mode: 'sync', globalBatch: 32 }).predict(4, 8)
 */
export function fitSpeedModel(samples: readonly SpeedSample[], opts: BestFitOptions): BestSpeedModel {
  checkSamples(samples);
  if (samples.length === 0) throw new RangeError('fitSpeedModel: at least one speed sample is needed');
  const batch = opts.globalBatch ?? 1;
  const sets = opts.laws ?? candidateFeatureSets(opts.mode);
  let rows: FitRow[] = samples.map((s) => ({
    ps: s.ps,
    workers: s.workers,
    stepTime: stepTimeOf(opts.mode, s.stepsPerSec, s.workers),
    scale: Math.sqrt(s.weight ?? 1),
  }));
  arena.reset();
  const shared = sharedDesign(sets, rows, batch, takeScratch);
  let { fits, weights } = fitAll(sets, rows, shared);
  const dropped: number[] = [];
  const outlier = outlierOf(fits, weights, rows);
  if (outlier >= 0) {
    dropped.push(outlier);
    rows = rows.map((r, i) => ({
      ps: r.ps,
      workers: r.workers,
      stepTime: r.stepTime,
      scale: i === outlier ? 0 : r.scale,
    }));
    reweightDesign(shared, rows);
    ({ fits, weights } = fitAll(sets, rows, shared));
  }
  const points = residualPoints(rows, fits, weights);
  const kernel = opts.residualKernel === undefined ? DEFAULT_RESIDUAL_KERNEL : opts.residualKernel;
  const used = rows.filter((r) => r.scale > 0).length;
  const cv = fits.reduce((a, f, i) => a + (weights[i] as number) * f.cvError, 0);
  const logSpread =
    used < MIN_CV_ROWS || !Number.isFinite(cv) ? PRIOR_LOG_SPREAD : Math.max(Math.sqrt(cv), MIN_LOG_SPREAD);
  // The predictor keeps θ only: the fits' residual vectors live in the scratch arena, reused by the next fit.
  const laws = fits.map((f) => ({ set: f.set, theta: f.theta }));
  return {
    laws: fits.map((f, i) => ({
      features: f.set,
      ridge: f.ridge,
      theta: Array.from(f.theta),
      weight: weights[i] as number,
      cvError: f.cvError,
    })),
    logSpread,
    dropped,
    predict(ps, workers) {
      checkShape(ps, workers);
      const logT =
        ensembleLogStepTime(laws, weights, ps, workers, batch) +
        (kernel ? residualCorrection(points, ps, workers, kernel) : 0);
      const f = speedOf(opts.mode, Math.exp(logT), workers);
      const half = Z90 * logSpread;
      return { stepsPerSec: f, lower: f * Math.exp(-half), upper: f * Math.exp(half) };
    },
  };
}
