/**
 * A small Levenberg–Marquardt least-squares solver for the Pollux baseline (≤ 8 unknowns): minimises
 * ½‖r(x)‖² with a forward-difference Jacobian and Marquardt's diagonal damping. Unknowns are kept
 * in [−LIMIT, LIMIT] (callers pass logs and logits, so that is every positive value that matters).
 */

/** Writes the residuals at x into `out` (length fixed per problem). */
export type Residuals = (x: ArrayLike<number>, out: Float64Array) => void;

export interface LmResult {
  readonly x: Float64Array;
  /** ½‖r‖² at x. */
  readonly cost: number;
  readonly iterations: number;
}

const LIMIT = 50;
const MAX_ITERATIONS = 200;

const clamp = (v: number): number => Math.min(LIMIT, Math.max(-LIMIT, v));

function halfSquare(r: Float64Array): number {
  let s = 0;
  for (const v of r) s += v * v;
  return 0.5 * s;
}

/** Solves the d×d system a·z = b in place (partial pivoting); false when singular. */
export function solveLinear(a: Float64Array, b: Float64Array, d: number): boolean {
  for (let c = 0; c < d; c++) {
    let p = c;
    for (let r = c + 1; r < d; r++)
      if (Math.abs(a[r * d + c] as number) > Math.abs(a[p * d + c] as number)) p = r;
    const pivot = a[p * d + c] as number;
    if (!(Math.abs(pivot) > 1e-300)) return false;
    if (p !== c) {
      for (let k = 0; k < d; k++) {
        const t = a[c * d + k] as number;
        a[c * d + k] = a[p * d + k] as number;
        a[p * d + k] = t;
      }
      const t = b[c] as number;
      b[c] = b[p] as number;
      b[p] = t;
    }
    for (let r = c + 1; r < d; r++) {
      const f = (a[r * d + c] as number) / pivot;
      if (f === 0) continue;
      for (let k = c; k < d; k++) a[r * d + k] = (a[r * d + k] as number) - f * (a[c * d + k] as number);
      b[r] = (b[r] as number) - f * (b[c] as number);
    }
  }
  for (let r = d - 1; r >= 0; r--) {
    let s = b[r] as number;
    for (let k = r + 1; k < d; k++) s -= (a[r * d + k] as number) * (b[k] as number);
    b[r] = s / (a[r * d + r] as number);
  }
  return true;
}

/** Jacobian (n×d, row-major) by forward differences. */
function jacobian(
  f: Residuals,
  x: Float64Array,
  r: Float64Array,
  jac: Float64Array,
  scratch: Float64Array,
): void {
  const n = r.length;
  const d = x.length;
  const probe = Float64Array.from(x);
  for (let j = 0; j < d; j++) {
    const h = 1e-6 * Math.max(1, Math.abs(x[j] as number));
    probe[j] = (x[j] as number) + h;
    f(probe, scratch);
    for (let i = 0; i < n; i++) jac[i * d + j] = ((scratch[i] as number) - (r[i] as number)) / h;
    probe[j] = x[j] as number;
  }
}

/**
 * Minimises ½‖r(x)‖² from `start`.
 * @example levenbergMarquardt((x, out) => { out[0] = x[0] - 3; }, [0], 1).x[0] // ≈ 3
 */
export function levenbergMarquardt(f: Residuals, start: readonly number[], n: number): LmResult {
  const d = start.length;
  let x = Float64Array.from(start, clamp);
  let r = new Float64Array(n);
  f(x, r);
  let cost = halfSquare(r);
  const jac = new Float64Array(n * d);
  const scratch = new Float64Array(n);
  const trialR = new Float64Array(n);
  let lambda = 1e-3;
  let iterations = 0;
  for (; iterations < MAX_ITERATIONS && Number.isFinite(cost); iterations++) {
    jacobian(f, x, r, jac, scratch);
    const jtj = new Float64Array(d * d);
    const jtr = new Float64Array(d);
    for (let i = 0; i < n; i++) {
      for (let a = 0; a < d; a++) {
        const ja = jac[i * d + a] as number;
        jtr[a] = (jtr[a] as number) + ja * (r[i] as number);
        for (let b = 0; b < d; b++)
          jtj[a * d + b] = (jtj[a * d + b] as number) + ja * (jac[i * d + b] as number);
      }
    }
    let improved = false;
    while (lambda < 1e12) {
      const a = jtj.slice();
      for (let k = 0; k < d; k++) a[k * d + k] = (a[k * d + k] as number) * (1 + lambda) + 1e-12;
      const step = jtr.map((v) => -v);
      if (solveLinear(a, step, d)) {
        const trial = x.map((v, k) => clamp(v + (step[k] as number)));
        f(trial, trialR);
        const trialCost = halfSquare(trialR);
        if (trialCost < cost) {
          const gain = cost - trialCost;
          x = trial;
          r = Float64Array.from(trialR);
          cost = trialCost;
          lambda = Math.max(lambda / 3, 1e-12);
          improved = gain > 1e-12 * Math.max(cost, 1e-300);
          break;
        }
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  return { x, cost, iterations };
}
