/**
 * Prediction interval by profile likelihood along the curve's bend r: every r whose best fit is within
 * z² (autocorrelation-corrected) noise variances of the optimum is plausible; the interval spans the
 * predictions of the plausible extremes. Cheap (about 20 extra closed-form fits) and it widens by itself when
 * the data do not pin the curve down yet (early in training, or after a learning-rate drop).
 */
import { fitEq1 } from './fit';
import type { CurveFit, FitData } from './fit';
import { lossCurve } from './curve';
import { predictEpoch, predictEpochWith } from './predict-epoch';
import { fitSlowShape, rateShapeMean } from './rate-shape';
import type { PredictContext } from './predict-epoch';

export interface IntervalContext extends PredictContext {
  /** The point prediction (epoch). */
  readonly epoch: number;
  readonly z: number;
  /** The fit's residual autocorrelation when the caller has it already (else computed here). */
  readonly rho?: number;
}

/** Lag-1 autocorrelation of the residuals, clamped to [0, 0.9]: training-loss noise is rarely independent. */
export function residualAutocorrelation(fit: CurveFit, d: FitData): number {
  let num = 0;
  let den = 0;
  let prev = NaN;
  for (let i = 0; i < d.x.length; i++) {
    const r = (d.y[i] ?? 0) - lossCurve(fit.beta, d.x[i] ?? 0);
    den += r * r;
    if (i > 0) num += r * prev;
    prev = r;
  }
  return den > 0 ? Math.min(0.9, Math.max(0, num / den)) : 0;
}

/** The log r (between `from` and `limit`) where the profile SSE reaches `target`, by bisection. */
function profileBoundary(fit: CurveFit, limit: number, target: number): number {
  if (fit.profileSse(limit) <= target) return limit;
  let inside = fit.logR;
  let outside = limit;
  for (let i = 0; i < 8; i++) {
    const mid = (inside + outside) / 2;
    if (fit.profileSse(mid) <= target) inside = mid;
    else outside = mid;
  }
  return inside;
}

/** Interval [lower, upper] of the predicted total steps, and the SSE below which a curve is plausible. */
export function profileInterval(
  fit: CurveFit,
  d: FitData,
  ctx: IntervalContext,
): { lower: number; upper: number; acceptableSse: number } {
  const n = d.x.length;
  const rho = ctx.rho ?? residualAutocorrelation(fit, d);
  const inflation = (1 + rho) / (1 - rho);
  const target = fit.sse + (ctx.z * ctx.z * inflation * fit.sse) / Math.max(n - 3, 1);
  let lo = ctx.epoch;
  let hi = ctx.epoch;
  for (const limit of [fit.logRMin, fit.logRMax]) {
    const beta = fit.profile(profileBoundary(fit, limit, target)).beta;
    const e = predictEpoch(beta, ctx);
    if (e === null) hi = ctx.maxEpoch;
    else {
      lo = Math.min(lo, e);
      hi = Math.max(hi, e);
    }
  }
  // One epoch either side: the truth lives on the epoch grid, so a point prediction is ±1 epoch at best.
  const s = ctx.rule.stepsPerEpoch;
  return { lower: Math.max(s, lo * s), upper: (hi + 2) * s, acceptableSse: target };
}

/**
 * How far the prediction moved between a fit on the older part of the segment (the first `share` of its
 * span) and the fit on all of it, in epochs. When the curve is not quite of Eq. 1's form (a power law, a
 * slow second phase), predictions keep drifting the same way as data arrive; the estimator extends the
 * interval by one more such move in that direction. 0 when the older part is too small to fit.
 */
export function predictionDrift(
  fit: CurveFit,
  d: FitData,
  ctx: PredictContext,
  epoch: number,
  minPoints: number,
  share = 0.6,
): number {
  const n = d.x.length;
  const cut = share * (d.x[n - 1] ?? 0);
  let m = 0;
  while (m < n && (d.x[m] ?? 0) <= cut) m++;
  if (m < minPoints) return 0;
  // Warm start around the full fit: the older part's curvature is usually close.
  const older = fitEq1({ ...d, count: m }, { around: fit.logR, halfWidth: 1.5 });
  const e = predictEpoch(older.beta, ctx);
  return e === null ? ctx.maxEpoch - epoch : epoch - e;
}

/**
 * The convergence epoch of the slower-decaying alternative shape when it fits within `acceptableSse` (as
 * well as the plausible Eq. 1 curves), else null: then the data cannot rule out that future.
 */
export function slowShapeEpoch(d: FitData, ctx: PredictContext, acceptableSse: number): number | null {
  const alt = fitSlowShape(d);
  if (alt.sse > acceptableSse) return null;
  return predictEpochWith((from, to) => rateShapeMean(alt, from, to), ctx) ?? ctx.maxEpoch;
}
