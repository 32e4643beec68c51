/**
 * The paper's fitting procedure for Eq. 1, kept as the baseline of `eval convergence`: for a candidate
 * β2 ∈ [0, min l), 1/(l − β2) = β0·x + β1 is linear, solved by NNLS; the β2 with the smallest residual on
 * the loss itself is found by golden section.
 */
import type { Beta } from './curve';
import { lossCurve } from './curve';
import type { FitData } from './fit';
import { solveNnls2 } from './nnls2';

function fitForBeta2(d: FitData, beta2: number): { beta: Beta; sse: number } {
  let gg = 0;
  let gh = 0;
  let hh = 0;
  let gy = 0;
  let hy = 0;
  let yy = 0;
  for (let i = 0; i < d.x.length; i++) {
    const w = d.w[i] ?? 0;
    const x = d.x[i] ?? 0;
    const z = 1 / ((d.y[i] ?? 0) - beta2);
    gg += w * x * x;
    gh += w * x;
    hh += w;
    gy += w * x * z;
    hy += w * z;
    yy += w * z * z;
  }
  const s = solveNnls2({ gg, gh, hh, gy, hy, yy });
  const beta: Beta = [s.a, Math.max(s.c, 1e-12), beta2];
  let sse = 0;
  for (let i = 0; i < d.x.length; i++) {
    const r = (d.y[i] ?? 0) - lossCurve(beta, d.x[i] ?? 0);
    sse += (d.w[i] ?? 0) * r * r;
  }
  return { beta, sse };
}

/** Fits Eq. 1 the paper's way; returns β (for the normalised loss) and the weighted SSE. */
export function fitEq1Paper(d: FitData): { beta: Beta; sse: number } {
  let minY = Infinity;
  for (let i = 0; i < d.y.length; i++) minY = Math.min(minY, d.y[i] ?? Infinity);
  const GOLDEN = (Math.sqrt(5) - 1) / 2;
  let a = 0;
  let b = minY * (1 - 1e-6);
  let c = b - GOLDEN * (b - a);
  let e = a + GOLDEN * (b - a);
  let fc = fitForBeta2(d, c);
  let fe = fitForBeta2(d, e);
  for (let i = 0; i < 40; i++) {
    if (fc.sse <= fe.sse) {
      b = e;
      e = c;
      fe = fc;
      c = b - GOLDEN * (b - a);
      fc = fitForBeta2(d, c);
    } else {
      a = c;
      c = e;
      fc = fe;
      e = a + GOLDEN * (b - a);
      fe = fitForBeta2(d, e);
    }
  }
  return fc.sse <= fe.sse ? fc : fe;
}
