/**
 * Least-squares fit of Eq. 1, l(x) = 1/(β0·x + β1) + β2 with β ≥ 0, by variable projection.
 *
 * Why not the paper's transform (NNLS on 1/(l − β2) for a searched β2, kept as `fitEq1Paper`): the
 * transform blows up the noise of points near the asymptote and forces β2 below the noisiest low point.
 * Writing Eq. 1 as l = a·g(x) + c with g = 1/(r·x + 1), a = 1/β1, r = β0/β1, c = β2 makes it LINEAR in
 * (a, c) for a fixed curvature r, so a closed-form two-variable NNLS (`solveNnls2`) gives the exact
 * least-squares β for each r, and a 1-D search (log-grid, then Brent's method) finds r. Residuals are
 * measured on the loss itself, as the paper asks.
 */
import type { Beta } from './curve';
import { brentMinimise } from './brent';
import { nnls2Sse, solveNnls2 } from './nnls2';

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
const GOLDEN = (Math.sqrt(5) - 1) / 2;
/**
 * Brent's tolerance, relative to the searched range: about what 22 golden-section steps reached (the
 * search used before), in about half the passes over the points.
 */
const BRENT_TOLERANCE = 1e-5;
/** The main fit's tolerance: its β is reported, so finer (β to ~6 significant digits on noiseless data). */
const MAIN_TOLERANCE = 1e-7;

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
 * The profile along log r: `sse` is the allocation-free hot path used by the searches (a refit runs it
 * ~40 times), `point` also builds β. A class, not closures: thousands of fits per round would otherwise
 * create (and, under the dev loader, name) several closures each.
 */
class Profile {
  private readonly d: FitData;
  private readonly n: number;
  private readonly hh: number;
  private readonly hy: number;
  private readonly yy: number;
  private gg = 0;
  private gh = 0;
  private gy = 0;

  constructor(d: FitData) {
    this.d = d;
    this.n = d.count ?? d.x.length;
    const sums = constantSums(d);
    this.hh = sums.hh;
    this.hy = sums.hy;
    this.yy = sums.yy;
  }

  /** The r-dependent sums. */
  private accumulate(r: number): void {
    const { x, y, w: weights } = this.d;
    const n = this.n;
    let gg = 0;
    let gh = 0;
    let gy = 0;
    // Hot loop: indices are in range, so plain casts instead of `?? 0` checks.
    for (let i = 0; i < n; i++) {
      const w = weights[i] as number;
      const g = 1 / (r * (x[i] as number) + 1);
      const wg = w * g;
      gg += wg * g;
      gh += wg;
      gy += wg * (y[i] as number);
    }
    this.gg = gg;
    this.gh = gh;
    this.gy = gy;
  }

  sse(logR: number): number {
    this.accumulate(Math.exp(logR));
    return nnls2Sse(this.gg, this.gh, this.hh, this.gy, this.hy, this.yy);
  }

  point(logR: number): ProfilePoint {
    const r = Math.exp(logR);
    this.accumulate(r);
    const { gg, gh, hh, gy, hy, yy } = this;
    const s = solveNnls2({ gg, gh, hh, gy, hy, yy });
    // a = 0 means a flat curve: represent it with β0 = 0 and a huge β1 (1/β1 ≈ 0).
    const beta: Beta = s.a > 0 ? [r / s.a, 1 / s.a, s.c] : [0, Number.MAX_VALUE, s.c];
    return { logR, beta, sse: s.sse };
  }
}

/** The fit's result; its profile methods re-evaluate the same data. */
class FittedCurve implements CurveFit {
  readonly logR: number;
  readonly beta: Beta;
  readonly sse: number;
  readonly logRMin: number;
  readonly logRMax: number;
  private readonly shape: Profile;

  constructor(top: ProfilePoint, range: { logRMin: number; logRMax: number }, shape: Profile) {
    this.logR = top.logR;
    this.beta = top.beta;
    this.sse = top.sse;
    this.logRMin = range.logRMin;
    this.logRMax = range.logRMax;
    this.shape = shape;
  }

  profile(logR: number): ProfilePoint {
    return this.shape.point(logR);
  }

  profileSse(logR: number): number {
    return this.shape.sse(logR);
  }
}

/** Golden-section minimisation of `f` over [lo, hi]; returns the best abscissa and its value. */
export function goldenSearch(
  f: (t: number) => number,
  lo: number,
  hi: number,
  iterations: number,
): { readonly x: number; readonly value: number } {
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
  return fc <= fd ? { x: c, value: fc } : { x: d, value: fd };
}

/** Golden-section minimisation of `f` over [lo, hi]; returns the best abscissa. */
export function goldenSection(f: (t: number) => number, lo: number, hi: number, iterations: number): number {
  return goldenSearch(f, lo, hi, iterations).x;
}

/** Search settings: by default a log-grid over the whole range, then golden section around the best. */
export interface FitOptions {
  /** Warm start: search only log r ∈ around ± halfWidth (no grid, Brent's method), e.g. when refitting similar data. */
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
  const profile = new Profile(d);
  const range = { logRMin, logRMax };
  if (options.around !== undefined) {
    const half = options.halfWidth ?? 1;
    const lo = Math.max(logRMin, options.around - half);
    const hi = Math.min(logRMax, options.around + half);
    // Brent, not golden section: the same precision in far fewer passes over the points (this path refits
    // older data to measure the prediction's drift, which only widens the interval).
    const best = brentMinimise((t) => profile.sse(t), lo, hi, BRENT_TOLERANCE * (hi - lo)).x;
    return new FittedCurve(profile.point(best), range, profile);
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
  // Brent converges superlinearly on this smooth profile: a tight tolerance costs only a few passes more.
  const refined = brentMinimise((t) => profile.sse(t), lo, hi, MAIN_TOLERANCE * (hi - lo));
  const gridBest = logRMin + bestIndex * stepSize;
  return new FittedCurve(profile.point(refined.value <= bestSse ? refined.x : gridBest), range, profile);
}
