/**
 * Weighted non-negative least squares with two unknowns, in closed form: min Σ wᵢ(yᵢ − a·gᵢ − c·hᵢ)², a, c ≥ 0.
 * Why not `ml-fcnnls`: it allocates matrices per call; this runs inside a 1-D search thousands of times per
 * second, and with two variables the active-set method reduces to "unconstrained, else the better of the two
 * one-variable fits" (the tests check it against `ml-fcnnls`).
 */

/** Sufficient statistics of the problem, accumulated by the caller in one pass. */
export interface Nnls2Sums {
  readonly gg: number;
  readonly gh: number;
  readonly hh: number;
  readonly gy: number;
  readonly hy: number;
  readonly yy: number;
}

export interface Nnls2Solution {
  readonly a: number;
  readonly c: number;
  /** Weighted residual sum of squares. */
  readonly sse: number;
}

function sseOf(s: Nnls2Sums, a: number, c: number): number {
  const v = s.yy - 2 * a * s.gy - 2 * c * s.hy + a * a * s.gg + 2 * a * c * s.gh + c * c * s.hh;
  return Math.max(0, v);
}

/** Solves the two-variable NNLS from its sufficient statistics. */
export function solveNnls2(s: Nnls2Sums): Nnls2Solution {
  const det = s.gg * s.hh - s.gh * s.gh;
  if (det > 1e-12 * s.gg * s.hh) {
    const a = (s.gy * s.hh - s.hy * s.gh) / det;
    const c = (s.hy * s.gg - s.gy * s.gh) / det;
    if (a >= 0 && c >= 0) return { a, c, sse: sseOf(s, a, c) };
  }
  // The optimum lies on a boundary: try each one-variable fit (clamped at 0) and keep the better.
  const aOnly = s.gg > 0 ? Math.max(0, s.gy / s.gg) : 0;
  const cOnly = s.hh > 0 ? Math.max(0, s.hy / s.hh) : 0;
  const sseA = sseOf(s, aOnly, 0);
  const sseC = sseOf(s, 0, cOnly);
  return sseA <= sseC ? { a: aOnly, c: 0, sse: sseA } : { a: 0, c: cOnly, sse: sseC };
}

/**
 * The SSE of {@link solveNnls2}'s solution from the six sums, without building objects: the 1-D searches
 * call this ~100 times per refit, and allocations there show up as garbage-collection time. Same arithmetic
 * as `solveNnls2`, so the same numbers.
 */
export function nnls2Sse(gg: number, gh: number, hh: number, gy: number, hy: number, yy: number): number {
  const det = gg * hh - gh * gh;
  if (det > 1e-12 * gg * hh) {
    const a = (gy * hh - hy * gh) / det;
    const c = (hy * gg - gy * gh) / det;
    if (a >= 0 && c >= 0) return sseAt(gg, gh, hh, gy, hy, yy, a, c);
  }
  const aOnly = gg > 0 ? Math.max(0, gy / gg) : 0;
  const cOnly = hh > 0 ? Math.max(0, hy / hh) : 0;
  return Math.min(sseAt(gg, gh, hh, gy, hy, yy, aOnly, 0), sseAt(gg, gh, hh, gy, hy, yy, 0, cOnly));
}

function sseAt(
  gg: number,
  gh: number,
  hh: number,
  gy: number,
  hy: number,
  yy: number,
  a: number,
  c: number,
): number {
  return Math.max(0, yy - 2 * a * gy - 2 * c * hy + a * a * gg + 2 * a * c * gh + c * c * hh);
}
