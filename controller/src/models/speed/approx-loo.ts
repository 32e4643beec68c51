/**
 * Closed-form leave-one-out residuals of a least-squares fit (the "hat matrix" shortcut): the held-out
 * miss of row i is e_i / (1 − h_ii). For NNLS it is exact while leaving a row out keeps the same
 * coefficients at zero — nearly always once there are many rows, which is when it is used (refitting
 * thousands of jobs with tens of samples each would otherwise cost one NNLS per fold).
 */
import type { CandidateDesign } from './shared-design';

/** Scratch of the shortcut (≤ 16 coefficients; fits run one at a time): no allocation per call. */
const MAX_DIM = 16;
const activeScratch = new Int32Array(MAX_DIM);
const matrixScratch = new Float64Array(MAX_DIM * MAX_DIM);
const inverseScratch = new Float64Array(MAX_DIM * MAX_DIM);
const rowScratch = new Float64Array(MAX_DIM);

/** Inverts the m×m matrix `a` (row-major) in place by Gauss–Jordan, using `inv` as scratch; false if singular. */
function invertInPlace(a: Float64Array, m: number, inv: Float64Array): boolean {
  inv.fill(0, 0, m * m);
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
  a.set(inv.subarray(0, m * m));
  return true;
}

/**
 * Leave-one-out log residuals log(t / t̂₋ᵢ) of every row, for the candidate's relative design (read in
 * place from the shared one; target 1 per row, row weights `weights`), the fitted scaled coefficients `phi` and the ridge used. When given,
 * `fitted` receives every row's in-sample ratio t̂ᵢ / tᵢ (computed on the way).
 */
export function approximateLooResiduals(
  design: CandidateDesign,
  weights: ArrayLike<number>,
  phi: Float64Array,
  ridge: number,
  out: Float64Array,
  fitted?: Float64Array,
): void {
  const { full, cols } = design;
  const { rel } = design.shared;
  const stride = design.shared.codes.length;
  const d = full.dim;
  if (d > MAX_DIM) throw new RangeError(`approximateLooResiduals: at most ${MAX_DIM} coefficients, got ${d}`);
  const active = activeScratch;
  let m = 0;
  for (let j = 0; j < d; j++) if ((phi[j] as number) > 0) active[m++] = j;
  const a = matrixScratch;
  for (let r = 0; r < m; r++) {
    const j = active[r] as number;
    for (let c = 0; c < m; c++) {
      const k = active[c] as number;
      a[r * m + c] = (full.gram[j * d + k] as number) + (j === k ? ridge : 0);
    }
  }
  const invertible = m > 0 && invertInPlace(a, m, inverseScratch);
  const x = rowScratch;
  for (let i = 0; i < out.length; i++) {
    // Inactive coefficients are 0: the ratio over the active columns equals the full row's.
    let ratio = 0;
    for (let r = 0; r < m; r++) {
      const xr = rel[i * stride + (cols[active[r] as number] as number)] as number;
      x[r] = xr;
      ratio += xr * (phi[active[r] as number] as number);
    }
    // h = xᵀ·(A⁻¹x): each row of A⁻¹x is its own sum, so the additions do not wait on one another.
    let h = 0;
    if (invertible)
      for (let r = 0; r < m; r++) {
        let u = 0;
        for (let c = 0; c < m; c++) u += (a[r * m + c] as number) * (x[c] as number);
        h += (x[r] as number) * u;
      }
    h *= weights[i] as number;
    if (fitted) fitted[i] = ratio;
    const held = h < 1 - 1e-9 ? 1 - (1 - ratio) / (1 - h) : 0;
    out[i] = -Math.log(Math.max(held, 1e-300));
  }
}
