/**
 * Brent's minimisation (parabolic interpolation with golden-section safeguards) of a 1-D function over
 * [lo, hi]. On the smooth profiles of the curve fits it reaches a given precision in about a third of
 * the evaluations golden section needs (each evaluation is a pass over every point), so it serves the
 * searches that only shape the prediction interval; the main fit keeps its golden section.
 */

const CGOLD = (3 - Math.sqrt(5)) / 2;

/** The minimiser of `f` over [lo, hi] to within about `tolerance`, and its value. */
export function brentMinimise(
  f: (t: number) => number,
  lo: number,
  hi: number,
  tolerance: number,
  maxEvaluations = 60,
): { readonly x: number; readonly value: number } {
  let a = Math.min(lo, hi);
  let b = Math.max(lo, hi);
  let x = a + CGOLD * (b - a);
  let w = x;
  let v = x;
  let fx = f(x);
  let fw = fx;
  let fv = fx;
  let d = 0;
  let e = 0;
  for (let evaluations = 1; evaluations < maxEvaluations; evaluations++) {
    const mid = (a + b) / 2;
    const tol1 = tolerance + 1e-12 * Math.abs(x);
    const tol2 = 2 * tol1;
    if (Math.abs(x - mid) <= tol2 - (b - a) / 2) break;
    let golden = true;
    if (Math.abs(e) > tol1) {
      // Parabola through (v, fv), (w, fw), (x, fx): accepted when it falls inside the bracket and moves
      // less than half the step before last (else the search could stall).
      const r = (x - w) * (fx - fv);
      let q = (x - v) * (fx - fw);
      let p = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      q = Math.abs(q);
      const previous = e;
      e = d;
      if (Math.abs(p) < Math.abs(0.5 * q * previous) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        const u = x + d;
        if (u - a < tol2 || b - u < tol2) d = mid >= x ? tol1 : -tol1;
        golden = false;
      }
    }
    if (golden) {
      e = x >= mid ? a - x : b - x;
      d = CGOLD * e;
    }
    const u = Math.abs(d) >= tol1 ? x + d : x + (d > 0 ? tol1 : -tol1);
    const fu = f(u);
    if (fu <= fx) {
      if (u >= x) a = x;
      else b = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x) a = u;
      else b = u;
      if (fu <= fw || w === x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v === x || v === w) {
        v = u;
        fv = fu;
      }
    }
  }
  return { x, value: fx };
}
