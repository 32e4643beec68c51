/**
 * The convergence estimator: pre-process, find the current learning-rate segment, fit Eq. 1 to it, and
 * apply the convergence rule to the fitted curve, with a prediction interval.
 */
import { ScratchArena } from '../scratch-arena';
import type { Beta } from './curve';
import { lossCurve, meanLoss } from './curve';
import { fitEq1 } from './fit';
import { fitEq1Paper } from './fit-paper';
import type { CurveFit, FitData } from './fit';
import { scanDrops } from './lr-drop';
import { cleanPoints, downsample, epochMeanSeries, normalise, replaceOutliers } from './preprocess';
import { predictEpoch, predictEpochWith } from './predict-epoch';
import type { PredictContext } from './predict-epoch';
import { fitLateStart, type LateStartFit } from './late-start';
import { fitRateShape, rateShapeAt, rateShapeMean } from './rate-shape';
import type { RateShapeFit } from './rate-shape';
import { predictionDrift, profileInterval, residualAutocorrelation, slowShapeEpoch } from './interval';
import type { ConvergenceEstimate, ConvergenceRule, LossPoint } from './types';

/** Tuning of the estimator; the defaults are what `eval convergence` measures. */
export interface EstimateOptions {
  /** Fewest points (after cleaning, in the current segment) to attempt a fit. */
  readonly minPoints?: number;
  /** Fewest epochs the current segment must span. */
  readonly minEpochs?: number;
  /** Epochs either side in the paper's outlier rule (0 turns it off). */
  readonly outlierWindowEpochs?: number;
  /** Long histories are averaged down to this many points. */
  readonly maxPoints?: number;
  /** Weight ramp towards recent points: w = 1 + recencyWeight · x / span (0 = unweighted, as in the paper). */
  readonly recencyWeight?: number;
  /** Width of the prediction interval, in (autocorrelation-corrected) standard deviations of the profile. */
  readonly intervalZ?: number;
  /** The interval extends by this many times the drift of the prediction (see `predictionDrift`); 0 skips it. */
  readonly driftFactor?: number;
  /** Predictions beyond this many times the steps done are "insufficient data", not guesses. */
  readonly maxHorizonFactor?: number;
  readonly detectLrDrop?: boolean;
  /** Widen the interval to a slower-decaying shape's prediction when it fits as well (see `rate-shape.ts`). */
  readonly slowShape?: boolean;
  /** Predict with the paper's transform fit when it tracks the recent third of the points better (see `tailSse`). */
  readonly paperFitWhenBetter?: boolean;
  /**
   * Also consider an exponential a·e^(−r·k) + c (see `rate-shape.ts`): it competes on the newest third
   * like the two Eq. 1 fits, but only when its squared error over all the points is below
   * `fastShapeMargin` × that of our Eq. 1 fit.
   */
  readonly fastShape?: boolean;
  readonly fastShapeMargin?: number;
  /**
   * Also consider Eq. 1 with a delayed origin fitted to the newest two thirds (see `late-start.ts`); it
   * competes only when its squared error on those points is below `lateStartMargin` × our fit's.
   */
  readonly lateStart?: boolean;
  readonly lateStartMargin?: number;
}

const DEFAULTS = {
  minPoints: 8,
  minEpochs: 1,
  outlierWindowEpochs: 5,
  maxPoints: 80,
  recencyWeight: 1,
  intervalZ: 1.64,
  driftFactor: 2,
  maxHorizonFactor: 40,
  detectLrDrop: true,
  slowShape: true,
  paperFitWhenBetter: true,
  fastShape: true,
  fastShapeMargin: 0.5,
  lateStart: true,
  lateStartMargin: 0.25,
} as const;

/** Fewest loss points the estimator fits (its default `minPoints`). */
export const MIN_FIT_POINTS: number = DEFAULTS.minPoints;

type Settings = {
  readonly [K in keyof typeof DEFAULTS]: (typeof DEFAULTS)[K] extends boolean ? boolean : number;
};

/**
 * Memory of the fitted points (views of one buffer: small typed arrays cost ~1 µs each off the V8 heap).
 * Reset by every `estimateConvergence`, which is synchronous and returns none of it.
 */
const arena = new ScratchArena();

/** F statistic (2 and n−3 degrees of freedom) above which the fall is real: p < 0.5% for n ≥ 20. */
const MIN_F = 6.5;

function insufficient(reason: string): ConvergenceEstimate {
  return { status: 'insufficient-data', reason };
}

function checkRule(rule: ConvergenceRule): void {
  if (!(rule.stepsPerEpoch > 0)) throw new RangeError(`stepsPerEpoch must be > 0, got ${rule.stepsPerEpoch}`);
  if (!(rule.threshold > 0)) throw new RangeError(`threshold must be > 0, got ${rule.threshold}`);
  if (!Number.isInteger(rule.patience) || rule.patience < 1) {
    throw new RangeError(`patience must be an integer ≥ 1, got ${rule.patience}`);
  }
}

function fitData(points: readonly { step: number; loss: number }[], start: number, recency: number): FitData {
  const n = points.length;
  const x = arena.take(n);
  const y = arena.take(n);
  const w = arena.take(n);
  const span = Math.max((points[n - 1]?.step ?? start) - start, 1);
  for (let i = 0; i < n; i++) {
    const p = points[i] as { step: number; loss: number };
    const xi = p.step - start;
    x[i] = xi;
    y[i] = p.loss;
    w[i] = 1 + (recency * xi) / span;
  }
  // Always with `count`: every FitData then has one shape (the drift refit adds `count`), which keeps the
  // fits' property loads monomorphic.
  return { x, y, w, count: n };
}

/**
 * Whether the curve explains the data clearly better than a constant (an F-test on the SSE reduction, with the
 * noise variance inflated for autocorrelated residuals); else the loss is not decreasing beyond its noise.
 */
function isDecreasing(fit: CurveFit, data: FitData, rho: number): boolean {
  const n = data.x.length;
  let weight = 0;
  let mean = 0;
  for (let i = 0; i < n; i++) {
    weight += data.w[i] ?? 0;
    mean += (data.w[i] ?? 0) * (data.y[i] ?? 0);
  }
  mean /= weight;
  let sseConstant = 0;
  for (let i = 0; i < n; i++) sseConstant += (data.w[i] ?? 0) * ((data.y[i] ?? 0) - mean) ** 2;
  const variance = (fit.sse / Math.max(n - 3, 1)) * ((1 + rho) / (1 - rho));
  const f = (sseConstant - fit.sse) / 2 / Math.max(variance, 1e-300);
  return f > MIN_F && fit.beta[0] > 0;
}

/** Converts β of the normalised loss to β of the raw loss (loss = scale · normalised). */
function rawBeta(beta: Beta, scale: number): [number, number, number] {
  return [beta[0] / scale, beta[1] / scale, beta[2] * scale];
}

/** The points ready to fit: normalised history and the current learning-rate segment. */
interface Prepared {
  readonly normalised: readonly LossPoint[];
  readonly scale: number;
  /** Down-sampled points of the current segment. */
  readonly segment: readonly LossPoint[];
  readonly segmentStart: number;
  readonly dropStep: number | null;
  readonly stepsDone: number;
}

/** Cleans, replaces outliers, normalises, and cuts the segment after the last learning-rate drop. */
function prepare(points: readonly LossPoint[], rule: ConvergenceRule, o: Settings): Prepared | string {
  const cleaned = cleanPoints(points);
  const lastStep = cleaned[cleaned.length - 1]?.step;
  if (cleaned.length < o.minPoints || lastStep === undefined) {
    return `${cleaned.length} valid points, need at least ${o.minPoints}`;
  }
  const { points: normalised, scale } = normalise(
    replaceOutliers(cleaned, rule.stepsPerEpoch, o.outlierWindowEpochs),
  );
  const sampled = downsample(normalised, o.maxPoints);
  const drop = o.detectLrDrop ? scanDrops(sampled) : null;
  if (drop !== null && !drop.confirmed) {
    const at = Math.round(sampled[drop.index]?.step ?? 0);
    return `possible learning-rate drop near step ${at}: waiting for more points to confirm it`;
  }
  // The drop is found on averaged points; the segment is cut from the raw ones, between the two bins.
  const cut =
    drop === null ? -Infinity : ((sampled[drop.index - 1]?.step ?? 0) + (sampled[drop.index]?.step ?? 0)) / 2;
  const raw = drop === null ? normalised : normalised.filter((p) => p.step > cut);
  const first = raw[0];
  if (first === undefined) return 'no points after the learning-rate drop';
  const dropStep = drop === null ? null : first.step;
  const note = dropStep === null ? '' : ` after the learning-rate drop at step ${dropStep}`;
  if (raw.length < o.minPoints) return `${raw.length} points${note}, need at least ${o.minPoints}`;
  if (lastStep - first.step < o.minEpochs * rule.stepsPerEpoch) {
    return `the points${note} span less than ${o.minEpochs} epoch(s)`;
  }
  // Without a drop the curve starts at step 0 (Eq. 1's k); after one, at the first point after the drop.
  const segmentStart = dropStep ?? 0;
  const segment = downsample(raw, o.maxPoints);
  return { normalised, scale, segment, segmentStart, dropStep, stepsDone: Math.floor(lastStep) + 1 };
}

/** A fitted curve that may predict: its value and its exact mean over a step interval. */
interface Candidate {
  readonly at: (x: number) => number;
  readonly mean: (from: number, to: number) => number;
  /** Eq. 1 coefficients when the curve is of that form. */
  readonly beta: Beta | null;
  readonly shape: RateShapeFit | null;
  /** Steps after the segment start where this curve takes over from the observed epochs (default 0). */
  readonly start?: number;
  /** Steps after the segment start where `beta`'s x is 0 (default 0; see `late-start.ts`). */
  readonly origin?: number;
}

const eq1Candidate = (beta: Beta): Candidate => ({
  at: (x) => lossCurve(beta, x),
  mean: (from, to) => meanLoss(beta, from, to),
  beta,
  shape: null,
});

const lateCandidate = (f: LateStartFit): Candidate => ({
  at: (x) => lossCurve(f.beta, Math.max(0, x - f.origin)),
  mean: (from, to) => meanLoss(f.beta, Math.max(0, from - f.origin), Math.max(0, to - f.origin)),
  beta: f.beta,
  shape: null,
  start: f.start,
  origin: f.origin,
});

const shapeCandidate = (f: RateShapeFit): Candidate => ({
  at: (x) => rateShapeAt(f, x),
  mean: (from, to) => rateShapeMean(f, from, to),
  beta: null,
  shape: f,
});

/** The curve that predicts and its epoch, as one pair: ours when the chosen one meets no end. */
function prediction(
  ours: Beta,
  data: FitData,
  context: PredictContext,
  o: Settings,
): { curve: Candidate; epoch: number } | null {
  const own = eq1Candidate(ours);
  const curve = chooseCurve(own, data, o);
  const start = curve.start ?? 0;
  const epoch =
    start > 0
      ? predictEpochWith((from, to) => curve.mean(from + start, to + start), {
          ...context,
          segmentStart: context.segmentStart + start,
        })
      : predictEpochWith(curve.mean, context);
  if (epoch !== null) return { curve, epoch };
  if (curve === own) return null;
  const fallback = predictEpoch(ours, context);
  return fallback === null ? null : { curve: own, epoch: fallback };
}

/**
 * Our least-squares fit on the loss (recency-weighted), the paper's transform fit (NNLS on 1/(l − β2),
 * unweighted) or an exponential, whichever follows the newest third of the points more closely. The
 * transform weighs the low-loss tail most, which is what extrapolates on curves that start slowly (warm-up
 * plateaus) and on the paper's own 1/k form: with `eval convergence` (seed 1, median error at 50%) plateau
 * 8.5% → 4.2% (the paper's procedure: 4.2%), 1/k 4.1% → 3.2% (3.2%). The exponential takes exponential
 * curves at 75% from 9.9% to 0.0% (8.7%) and changes nothing on 1/k curves (ADR 0020); Eq. 1 with a
 * delayed origin takes warm-up curves at 75% from 6.4% to 4.5% (6.4%), also leaving 1/k as it was (ADR 0022).
 */
function chooseCurve(own: Candidate, data: FitData, o: Settings): Candidate {
  const n = data.x.length;
  const candidates: Candidate[] = [own];
  if (o.paperFitWhenBetter) {
    candidates.push(eq1Candidate(fitEq1Paper({ x: data.x, y: data.y, w: arena.take(n).fill(1) }).beta));
  }
  if (o.fastShape) {
    const fast = shapeCandidate(fitRateShape(data, 'fast'));
    // Three parameters each, so on 1/k data an exponential often fits the newest points as closely and
    // then predicts an early end; it must explain the whole history far better before it competes
    // (measured on held-out curves as well as on `eval convergence`'s; see the ADR on the choice).
    if (sseFrom(fast, data, 0) < o.fastShapeMargin * sseFrom(own, data, 0)) candidates.push(fast);
  }
  if (o.lateStart) {
    const late = fitLateStart(data, (n) => arena.take(n));
    if (late) {
      const curve = lateCandidate(late);
      // Like the exponential's gate: one parameter more always fits a little better, so it must
      // explain the points it was fitted on far better than our fit of the whole history.
      if (sseFrom(curve, data, late.first) < o.lateStartMargin * sseFrom(own, data, late.first))
        candidates.push(curve);
    }
  }
  let best = own;
  let bestSse = Infinity;
  for (const c of candidates) {
    const sse = tailSse(c, data);
    if (sse < bestSse) {
      bestSse = sse;
      best = c;
    }
  }
  return best;
}

/** Unweighted squared error of a curve on the newest third of the points. */
function tailSse(c: Candidate, data: FitData): number {
  return sseFrom(c, data, Math.floor((2 * data.x.length) / 3));
}

function sseFrom(c: Candidate, data: FitData, first: number): number {
  const n = data.x.length;
  let sse = 0;
  for (let i = first; i < n; i++) {
    const r = (data.y[i] ?? 0) - c.at(data.x[i] ?? 0);
    sse += r * r;
  }
  return sse;
}

/**
 * Estimates the total steps to convergence from the loss history.
 * @example estimateConvergence(points, { stepsPerEpoch: 100, threshold: 0.01, patience: 3 })
 */
export function estimateConvergence(
  points: readonly LossPoint[],
  rule: ConvergenceRule,
  options: EstimateOptions = {},
): ConvergenceEstimate {
  checkRule(rule);
  arena.reset();
  const o: Settings = { ...DEFAULTS, ...options };
  const prep = prepare(points, rule, o);
  if (typeof prep === 'string') return insufficient(prep);
  const data = fitData(prep.segment, prep.segmentStart, o.recencyWeight);
  const fit = fitEq1(data);
  const note = prep.dropStep === null ? '' : ` after the learning-rate drop at step ${prep.dropStep}`;
  const rho = residualAutocorrelation(fit, data);
  if (!isDecreasing(fit, data, rho))
    return insufficient(`the loss is not decreasing beyond its noise${note}`);
  const s = rule.stepsPerEpoch;
  const maxEpoch = Math.ceil((o.maxHorizonFactor * prep.stepsDone) / s);
  const series = epochMeanSeries(prep.normalised, s);
  const observed = (e: number): number => series.at(e);
  const context = { rule, segmentStart: prep.segmentStart, observed, maxEpoch };
  const chosen = prediction(fit.beta, data, context, o);
  if (chosen === null) {
    return insufficient(
      `the fitted curve does not meet the rule within ${o.maxHorizonFactor}× the steps done`,
    );
  }
  const { curve, epoch } = chosen;
  const beta = curve.beta ?? fit.beta;
  const predictedTotalSteps = (epoch + 1) * s;
  const profile = profileInterval(fit, data, { ...context, epoch, z: o.intervalZ, rho });
  const drift =
    o.driftFactor > 0 ? o.driftFactor * predictionDrift(fit, data, context, epoch, o.minPoints) : 0;
  const slow = o.slowShape ? slowShapeEpoch(data, context, profile.acceptableSse) : null;
  // The interval is our fit's profile; when the paper's fit gives the point, it is stretched to hold it.
  // The job is still running, so its true total is not below the epochs it has completed.
  const floor = Math.min(predictedTotalSteps, Math.floor(prep.stepsDone / s) * s);
  const lower = Math.min(
    predictedTotalSteps,
    Math.max(s, floor, Math.min(profile.lower, (epoch + 1 + Math.min(0, drift)) * s)),
  );
  return {
    status: 'ok',
    predictedTotalSteps,
    lower,
    upper: Math.max(
      predictedTotalSteps,
      profile.upper,
      (epoch + 1 + Math.max(0, drift)) * s,
      slow === null ? 0 : (slow + 1) * s,
    ),
    remainingSteps: Math.max(0, predictedTotalSteps - prep.stepsDone),
    beta: rawBeta(beta, prep.scale),
    converged: predictedTotalSteps <= prep.stepsDone,
    fitStartStep: prep.segmentStart + (curve.origin ?? 0),
    ...(prep.dropStep === null ? {} : { lrDropStep: prep.dropStep }),
    ...(curve.shape === null
      ? {}
      : { exponential: { a: curve.shape.a * prep.scale, r: curve.shape.r, c: curve.shape.c * prep.scale } }),
  };
}
