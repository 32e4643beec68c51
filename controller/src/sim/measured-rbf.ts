/**
 * DL2's speed function (Peng et al., pengyanghua/DL2 `speed.py`): a linear radial-basis
 * interpolation of the measured shapes — scipy's `Rbf(ps, workers, speed, function='linear')`,
 * f(x) = Σᵢ wᵢ·‖x − xᵢ‖ with the weights solving f(xᵢ) = speedᵢ at every measured shape. It
 * passes through every measurement and, unlike our table (`measured-table.ts`), goes on beyond the
 * largest measured shape, which is how DL2's simulator gives jobs up to 16 PS and 16 workers.
 * Used only where the trace asks for it (`speed.interpolation`: `table+rbf` beyond, `rbf` everywhere).
 */
import type { MeasuredRow } from './measured-table';

/** The RBF through `rows` (steps/s at (ps, workers)); throws on an empty or singular set. */
export function linearRbf(rows: readonly MeasuredRow[]): (ps: number, workers: number) => number {
  const n = rows.length;
  if (n === 0) throw new Error('no measured shapes');
  const dist = (a: MeasuredRow, p: number, w: number) => Math.hypot(a.ps - p, a.workers - w);
  // Augmented matrix [A | z], A_ij = ‖x_i − x_j‖, solved by Gaussian elimination with pivoting.
  const m = rows.map((ri) => [...rows.map((rj) => dist(rj, ri.ps, ri.workers)), ri.stepsPerSec]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    if (Math.abs(m[pivot]![col]!) < 1e-12) throw new Error('measured shapes repeat: the RBF is singular');
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const row = m[col]!;
    for (let r = col + 1; r < n; r++) {
      const f = m[r]![col]! / row[col]!;
      if (f === 0) continue;
      const target = m[r]!;
      for (let c = col; c <= n; c++) target[c]! -= f * row[c]!;
    }
  }
  const weights = new Float64Array(n);
  for (let r = n - 1; r >= 0; r--) {
    let s = m[r]![n]!;
    for (let c = r + 1; c < n; c++) s -= m[r]![c]! * weights[c]!;
    weights[r] = s / m[r]![r]!;
  }
  return (p, w) => rows.reduce((s, r, i) => s + weights[i]! * dist(r, p, w), 0);
}
