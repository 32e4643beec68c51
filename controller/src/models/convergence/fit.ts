/**
 * Least-squares fit of Eq. 1, l(x) = 1/(β0·x + β1) + β2 with β ≥ 0, by variable projection.
 *
 * Why not the paper's transform (NNLS on 1/(l − β2) for a searched β2, kept as `fitEq1Paper`): the
 * transform blows up the noise of points near the asymptote and forces β2 below the noisiest low point.
 * Writing Eq. 1 as l = a·g(x) + c with g = 1/(r·x + 1), a = 1/β1, r = β0/β1, c = β2 makes it LINEAR in
 * (a, c) for a fixed curvature r, so a closed-form two-variable NNLS (`solveNnls2`) gives the exact
 * least-squares β for each r, and a 1-D search (log-grid, then golden section) finds r. Residuals are
 * measured on the loss itself, as the paper asks.
 */
import type { Beta } from './curve';
import { solveNnls2 } from './nnls2';

/** Points to fit, as parallel arrays: x (steps since the segment start), y (normalised loss), w (weights). */
export interface FitData {
  readonly x: ArrayLike<number>;
  readonly y: ArrayLike<number>;
  readonly w: ArrayLike<number>;
  /** Use only the first `count` points (a prefix, without copying the arrays). */
  readonly count?: number;
}

export interface ProfilePoint {
  readonly logR: number;
  readonly beta: Beta;
  /** Weighted residual sum of squares at the best (a, c) for this r. */
  readonly sse: number;
}

export interface CurveFit extends ProfilePoint {
  /** Search range of log r, so callers can explore the profile (for the prediction interval). */
  readonly logRMin: number;
  readonly logRMax: number;
  /** Best β and SSE at a given log r (the profile of the fit along the curvature). */
  readonly profile: (logR: number) => ProfilePoint;
  /** The same profile's SSE only (no allocation). */
  readonly profileSse: (logR: number) => number;
}

const GRID = 14;
/** Enough to place log r within ~10⁻⁴ of the bracket: β to ~4 significant digits on noiseless data. */
const GOLDEN_ITERATIONS = 22;
const GOLDEN = (Math.sqrt(5) - 1) / 2;

/** Sums that do not depend on r, computed once per fit. */
function constantSums(d: FitData): { hh: number; hy: number; yy: number } {
  let hh = 0;
  let hy = 0;
  let yy = 0;
  const n = d.count ?? d.x.length;
  for (let i = 0; i < n; i++) {
    const w = d.w[i] ?? 0;
    const y = d.y[i] ?? 0;
    hh += w;
    hy += w * y;
    yy += w * y * y;
  }
  return { hh, hy, yy };
}

/**
 * The profile along log r: `sse` is the allocation-free hot path used by the searches (a refit runs it ~80
 * times), `point` also builds β.
 */
function makeProfile(d: FitData): { sse: (logR: number) => number; point: (logR: number) => ProfilePoint } {
  const { hh, hy, yy } = constantSums(d);
  const n = d.count ?? d.x.length;
  const solve = (logR: number) => {
    const r = Math.exp(logR);
    let gg = 0;
    let gh = 0;
    let gy = 0;
    // Hot loop (~80 times per refit): indices are in range, so plain casts instead of `?? 0` checks.
    const { x, y, w: weights } = d;
    for (let i = 0; i < n; i++) {
      const w = weights[i] as number;
      const g = 1 / (r * (x[i] as number) + 1);
      const wg = w * g;
      gg += wg * g;
      gh += wg;
      gy += wg * (y[i] as number);
    }
    return { r, s: solveNnls2({ gg, gh, hh, gy, hy, yy }) };
  };
  return {
    sse: (logR) => solve(logR).s.sse,
    point: (logR) => {
      const { r, s } = solve(logR);
      // a = 0 means a flat curve: represent it with β0 = 0 and a huge β1 (1/β1 ≈ 0).
      const beta: Beta = s.a > 0 ? [r / s.a, 1 / s.a, s.c] : [0, Number.MAX_VALUE, s.c];
      return { logR, beta, sse: s.sse };
    },
  };
}

/** Golden-section minimisation of `f` over [lo, hi]; returns the best abscissa. */
export function goldenSection(f: (t: number) => number, lo: number, hi: number, iterations: number): number {
  let a = lo;
  let b = hi;
  let c = b - GOLDEN * (b - a);
  let d = a + GOLDEN * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let i = 0; i < iterations; i++) {
    if (fc <= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - GOLDEN * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + GOLDEN * (b - a);
      fd = f(d);
    }
  }
  return fc <= fd ? c : d;
}

/** Search settings: by default a log-grid over the whole range, then golden section around the best. */
export interface FitOptions {
  /** Warm start: search only log r ∈ around ± halfWidth (no grid), e.g. when refitting similar data. */
  readonly around?: number;
  readonly halfWidth?: number;
}

/**
 * Fits Eq. 1 to the data. x must span a positive range. r is searched over [0.01, 10⁴] / span, i.e. curves
 * whose bend lies from far beyond the data to right at its start.
 */
export function fitEq1(d: FitData, options: FitOptions = {}): CurveFit {
  let span = 0;
  for (let i = 0; i < (d.count ?? d.x.length); i++) span = Math.max(span, d.x[i] ?? 0);
  span = Math.max(span, 1);
  const logRMin = Math.log(0.01 / span);
  const logRMax = Math.log(1e4 / span);
  const profile = makeProfile(d);
  if (options.around !== undefined) {
    const half = options.halfWidth ?? 1;
    const lo = Math.max(logRMin, options.around - half);
    const best = goldenSection(profile.sse, lo, Math.min(logRMax, options.around + half), GOLDEN_ITERATIONS);
    return { ...profile.point(best), logRMin, logRMax, profile: profile.point, profileSse: profile.sse };
  }
  const stepSize = (logRMax - logRMin) / (GRID - 1);
  let bestIndex = 0;
  let bestSse = Infinity;
  for (let i = 0; i < GRID; i++) {
    const sse = profile.sse(logRMin + i * stepSize);
    if (sse < bestSse) {
      bestSse = sse;
      bestIndex = i;
    }
  }
  const lo = logRMin + Math.max(0, bestIndex - 1) * stepSize;
  const hi = logRMin + Math.min(GRID - 1, bestIndex + 1) * stepSize;
  const refined = goldenSection(profile.sse, lo, hi, GOLDEN_ITERATIONS);
  const gridBest = logRMin + bestIndex * stepSize;
  const top = profile.point(profile.sse(refined) <= bestSse ? refined : gridBest);
  return { ...top, logRMin, logRMax, profile: profile.point, profileSse: profile.sse };
}
