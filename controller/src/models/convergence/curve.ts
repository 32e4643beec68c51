/** Evaluation of the paper's loss curve (Eq. 1): l(k) = 1 / (β0·k + β1) + β2. */

/** Coefficients [β0, β1, β2], all ≥ 0. */
export type Beta = readonly [number, number, number];

/**
 * Loss predicted by Eq. 1 at `step` (relative to the start of the fitted segment).
 * @example lossCurve([0.21, 1.07, 0.07], 10) // ≈ 0.40
 */
export function lossCurve(beta: Beta, step: number): number {
  const [b0, b1, b2] = beta;
  return 1 / (b0 * step + b1) + b2;
}

/**
 * Mean of Eq. 1 over the step interval [from, to) — the continuous counterpart of "an epoch's loss is the
 * mean of its points", so the rule gives the same answer whatever the sampling density of the points was.
 * Closed form: (1/β0)·ln((β0·to + β1)/(β0·from + β1)) / (to − from) + β2, with log1p for accuracy when the
 * curve is nearly flat over the interval.
 */
export function meanLoss(beta: Beta, from: number, to: number): number {
  const [b0, b1, b2] = beta;
  const width = to - from;
  if (width <= 0) return lossCurve(beta, from);
  const base = b0 * from + b1;
  if (b0 === 0) return 1 / b1 + b2;
  return Math.log1p((b0 * width) / base) / (b0 * width) + b2;
}
