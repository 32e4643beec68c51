/**
 * Closed-form leave-one-out residuals of a least-squares fit (the "hat matrix" shortcut): the held-out
 * miss of row i is e_i / (1 − h_ii). For NNLS it is exact while leaving a row out keeps the same
 * coefficients at zero — nearly always once there are many rows, which is when it is used (refitting
 * thousands of jobs with tens of samples each would otherwise cost one NNLS per fold).
 */
import type { NormalEquations } from './nnls';

/** Inverts the m×m matrix `a` (row-major) in place by Gauss–Jordan; false if singular. */
function invertInPlace(a: Float64Array, m: number): boolean {
  const inv = new Float64Array(m * m);
  for (let i = 0; i < m; i++) inv[i * m + i] = 1;
  for (let c = 0; c < m; c++) {
    let p = c;
    for (let r = c + 1; r < m; r++)
      if (Math.abs(a[r * m + c] as number) > Math.abs(a[p * m + c] as number)) p = r;
    const pivot = a[p * m + c] as number;
    if (Math.abs(pivot) < 1e-300) return false;
    if (p !== c) {
      for (let k = 0; k < m; k++) {
        const t = a[c * m + k] as number;
        a[c * m + k] = a[p * m + k] as number;
        a[p * m + k] = t;
        const u = inv[c * m + k] as number;
        inv[c * m + k] = inv[p * m + k] as number;
        inv[p * m + k] = u;
      }
    }
    for (let k = 0; k < m; k++) {
      a[c * m + k] = (a[c * m + k] as number) / pivot;
      inv[c * m + k] = (inv[c * m + k] as number) / pivot;
    }
    for (let r = 0; r < m; r++) {
      const f = a[r * m + c] as number;
      if (r === c || f === 0) continue;
      for (let k = 0; k < m; k++) {
        a[r * m + k] = (a[r * m + k] as number) - f * (a[c * m + k] as number);
        inv[r * m + k] = (inv[r * m + k] as number) - f * (inv[c * m + k] as number);
      }
    }
  }
  a.set(inv);
  return true;
}

/**
 * Leave-one-out log residuals log(t / t̂₋ᵢ) of every row, for the relative design `rel` (n×d, target 1
 * per row, row weights `weights`), the fitted scaled coefficients `phi` and the ridge used.
 */
export function approximateLooResiduals(
  full: NormalEquations,
  rel: Float64Array,
  weights: ArrayLike<number>,
  phi: Float64Array,
  ridge: number,
  out: Float64Array,
): void {
  const d = full.dim;
  const active: number[] = [];
  for (let j = 0; j < d; j++) if ((phi[j] as number) > 0) active.push(j);
  const m = active.length;
  const a = new Float64Array(m * m);
  active.forEach((j, r) =>
    active.forEach((k, c) => (a[r * m + c] = (full.gram[j * d + k] as number) + (j === k ? ridge : 0))),
  );
  const invertible = m > 0 && invertInPlace(a, m);
  for (let i = 0; i < out.length; i++) {
    let fitted = 0;
    let h = 0;
    for (let r = 0; r < m; r++) {
      const xr = rel[i * d + (active[r] as number)] as number;
      fitted += xr * (phi[active[r] as number] as number);
      if (!invertible) continue;
      for (let c = 0; c < m; c++)
        h += xr * (a[r * m + c] as number) * (rel[i * d + (active[c] as number)] as number);
    }
    h *= weights[i] as number;
    const ratio = h < 1 - 1e-9 ? 1 - (1 - fitted) / (1 - h) : 0;
    out[i] = -Math.log(Math.max(ratio, 1e-300));
  }
}
