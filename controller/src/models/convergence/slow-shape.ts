/**
 * A second curve family, l(x) = a/√(1 + r·x) + c (a, r, c ≥ 0), used only to widen the prediction interval.
 * Real loss curves often decay slower than Eq. 1's 1/k; when this slower shape fits the data about as well
 * as Eq. 1 does, the data cannot tell them apart, and its (later) convergence point is a plausible future
 * that the interval should include. Fitted like Eq. 1: closed-form NNLS in (a, c) for each r, 1-D search in r.
 */
import type { FitData } from './fit';
import { brentMinimise } from './brent';
import { nnls2Sse, solveNnls2 } from './nnls2';

export interface SlowShapeFit {
  readonly a: number;
  readonly r: number;
  readonly c: number;
  readonly sse: number;
}

/** Sums of the two-variable problem at r, written to `out` = [gg, gh, hh, gy, hy, yy] (no allocation). */
function sumsAt(d: FitData, r: number, out: Float64Array): void {
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
    const g = 1 / Math.sqrt(r * (d.x[i] as number) + 1);
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
function sseAt(d: FitData, logR: number): number {
  sumsAt(d, Math.exp(logR), sums);
  return nnls2Sse(
    sums[0] as number,
    sums[1] as number,
    sums[2] as number,
    sums[3] as number,
    sums[4] as number,
    sums[5] as number,
  );
}

function solveAt(d: FitData, logR: number): SlowShapeFit {
  const r = Math.exp(logR);
  sumsAt(d, r, sums);
  const [gg = 0, gh = 0, hh = 0, gy = 0, hy = 0, yy = 0] = sums;
  const s = solveNnls2({ gg, gh, hh, gy, hy, yy });
  return { a: s.a, r, c: s.c, sse: s.sse };
}

/** Least-squares fit of the slow shape (same search range as `fitEq1`). */
export function fitSlowShape(d: FitData): SlowShapeFit {
  const n = d.count ?? d.x.length;
  const span = Math.max(d.x[n - 1] ?? 1, 1);
  const lo = Math.log(0.01 / span);
  const hi = Math.log(1e4 / span);
  const grid = 12;
  let best = lo;
  let bestSse = Infinity;
  for (let i = 0; i < grid; i++) {
    const t = lo + ((hi - lo) * i) / (grid - 1);
    const sse = sseAt(d, t);
    if (sse < bestSse) {
      bestSse = sse;
      best = t;
    }
  }
  const step = (hi - lo) / (grid - 1);
  const from = Math.max(lo, best - step);
  const to = Math.min(hi, best + step);
  // Brent: about golden section's precision after 18 steps, in a third of the passes over the points.
  const refined = brentMinimise((t) => sseAt(d, t), from, to, 5e-5 * (to - from)).x;
  const fit = solveAt(d, refined);
  return fit.sse <= bestSse ? fit : solveAt(d, best);
}

/** Mean of the slow shape over [from, to): ∫ a/√(1 + r·x) dx = 2a·√(1 + r·x)/r. */
export function slowShapeMean(f: SlowShapeFit, from: number, to: number): number {
  const width = to - from;
  if (width <= 0 || f.r === 0) return f.a / Math.sqrt(1 + f.r * from) + f.c;
  return (2 * f.a * (Math.sqrt(1 + f.r * to) - Math.sqrt(1 + f.r * from))) / (f.r * width) + f.c;
}
