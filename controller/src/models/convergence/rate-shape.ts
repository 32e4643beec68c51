/**
 * Curve families other than Eq. 1, each l(x) = a·g(r·x) + c with a, r, c ≥ 0 and one decreasing basis g:
 * - `slow`: g(u) = 1/√(1 + u). Real loss curves often decay slower than Eq. 1's 1/k; when this shape fits
 *   the data about as well as Eq. 1 does, the data cannot tell them apart, and its (later) convergence
 *   point is a plausible future that the prediction interval should include.
 * - `fast`: g(u) = e^(−u). Curves that flatten exponentially (a short schedule, a small model) converge
 *   sooner than any 1/k curve through the same points; the estimator predicts with this shape when it
 *   forecasts the newest points best (see `estimate.ts`).
 * Fitted like Eq. 1: closed-form NNLS in (a, c) for each r, a 1-D search in log r.
 */
import type { FitData } from './fit';
import { brentMinimise } from './brent';
import { nnls2Sse, solveNnls2 } from './nnls2';

export type RateShapeKind = 'slow' | 'fast';

export interface RateShapeFit {
  readonly kind: RateShapeKind;
  readonly a: number;
  readonly r: number;
  readonly c: number;
  readonly sse: number;
}

/** The basis at u = r·x. */
function basis(kind: RateShapeKind, u: number): number {
  return kind === 'slow' ? 1 / Math.sqrt(u + 1) : Math.exp(-u);
}

/** Sums of the two-variable problem at r, written to `out` = [gg, gh, hh, gy, hy, yy] (no allocation). */
function sumsAt(d: FitData, kind: RateShapeKind, r: number, out: Float64Array): void {
  const n = d.count ?? d.x.length;
  let gg = 0;
  let gh = 0;
  let hh = 0;
  let gy = 0;
  let hy = 0;
  let yy = 0;
  for (let i = 0; i < n; i++) {
    const w = d.w[i] as number;
    const y = d.y[i] as number;
    const g = basis(kind, r * (d.x[i] as number));
    gg += w * g * g;
    gh += w * g;
    hh += w;
    gy += w * g * y;
    hy += w * y;
    yy += w * y * y;
  }
  out[0] = gg;
  out[1] = gh;
  out[2] = hh;
  out[3] = gy;
  out[4] = hy;
  out[5] = yy;
}

const sums = new Float64Array(6);

/** The best SSE at log r (the searches' hot path: no objects built). */
function sseAt(d: FitData, kind: RateShapeKind, logR: number): number {
  sumsAt(d, kind, Math.exp(logR), sums);
  return nnls2Sse(
    sums[0] as number,
    sums[1] as number,
    sums[2] as number,
    sums[3] as number,
    sums[4] as number,
    sums[5] as number,
  );
}

function solveAt(d: FitData, kind: RateShapeKind, logR: number): RateShapeFit {
  const r = Math.exp(logR);
  sumsAt(d, kind, r, sums);
  const [gg = 0, gh = 0, hh = 0, gy = 0, hy = 0, yy = 0] = sums;
  const s = solveNnls2({ gg, gh, hh, gy, hy, yy });
  return { kind, a: s.a, r, c: s.c, sse: s.sse };
}

/** Least-squares fit of one shape: a coarse grid over log r (the range `fitEq1` searches), then Brent. */
export function fitRateShape(d: FitData, kind: RateShapeKind): RateShapeFit {
  const n = d.count ?? d.x.length;
  const span = Math.max(d.x[n - 1] ?? 1, 1);
  const lo = Math.log(0.01 / span);
  const hi = Math.log(1e4 / span);
  const grid = 12;
  let best = lo;
  let bestSse = Infinity;
  for (let i = 0; i < grid; i++) {
    const t = lo + ((hi - lo) * i) / (grid - 1);
    const sse = sseAt(d, kind, t);
    if (sse < bestSse) {
      bestSse = sse;
      best = t;
    }
  }
  const step = (hi - lo) / (grid - 1);
  const from = Math.max(lo, best - step);
  const to = Math.min(hi, best + step);
  // Brent: about golden section's precision after 18 steps, in a third of the passes over the points.
  const refined = brentMinimise((t) => sseAt(d, kind, t), from, to, 5e-5 * (to - from)).x;
  const fit = solveAt(d, kind, refined);
  return fit.sse <= bestSse ? fit : solveAt(d, kind, best);
}

/** The slower-decaying shape a/√(1 + r·x) + c. */
export const fitSlowShape = (d: FitData): RateShapeFit => fitRateShape(d, 'slow');

/** The shape at `x` steps. */
export function rateShapeAt(f: Pick<RateShapeFit, 'kind' | 'a' | 'r' | 'c'>, x: number): number {
  return f.a * basis(f.kind, f.r * x) + f.c;
}

/**
 * Mean of the shape over [from, to), exact: ∫ a/√(1 + r·x) dx = 2a·√(1 + r·x)/r and ∫ a·e^(−r·x) dx =
 * −a·e^(−r·x)/r (with expm1 so a nearly flat stretch keeps its precision).
 */
export function rateShapeMean(f: RateShapeFit, from: number, to: number): number {
  const width = to - from;
  if (width <= 0 || f.r === 0) return rateShapeAt(f, from);
  if (f.kind === 'slow') {
    return (2 * f.a * (Math.sqrt(1 + f.r * to) - Math.sqrt(1 + f.r * from))) / (f.r * width) + f.c;
  }
  return (f.a * Math.exp(-f.r * from) * -Math.expm1(-f.r * width)) / (f.r * width) + f.c;
}
