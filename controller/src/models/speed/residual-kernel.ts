/**
 * Smoothing of the model's log residuals over nearby shapes — the blend with interpolation.
 * Why: on real clusters a speed law misses by amounts that are shared by neighbouring shapes
 * (chiefly shapes with the same number of PS: how the parameters happen to split across p servers
 * sets the busiest server's load). Spreading each measured residual to close shapes, shrunk toward 0
 * by a pseudo-count, corrects for that; with one sample nearby the correction is partial, and with
 * many measured shapes the prediction tends to the measurements themselves (interpolation).
 */

export interface ResidualPoint {
  /** ln(ps) and ln(workers) of the measured shape (precomputed: predictions loop over every point). */
  readonly lnPs: number;
  readonly lnWorkers: number;
  /** log(measured / modelled) step time. */
  readonly residual: number;
  readonly weight: number;
}

export interface ResidualKernelOptions {
  /** Kernel length in ln(ps): 0.3 ≈ neighbours within ±30% PS count. */
  readonly psLength: number;
  /** Kernel length in ln(workers). */
  readonly workersLength: number;
  /** Pseudo-count of zero residual (shrinkage toward the law). */
  readonly shrinkage: number;
}

export const DEFAULT_RESIDUAL_KERNEL: ResidualKernelOptions = {
  psLength: 0.3,
  workersLength: 1,
  shrinkage: 0.5,
};

/** The log correction to add to the law at (ps, workers). */
export function residualCorrection(
  points: readonly ResidualPoint[],
  ps: number,
  workers: number,
  opts: ResidualKernelOptions = DEFAULT_RESIDUAL_KERNEL,
): number {
  const lp = Math.log(ps);
  const lw = Math.log(workers);
  let num = 0;
  let den = opts.shrinkage;
  for (const p of points) {
    const dp = (p.lnPs - lp) / opts.psLength;
    const dw = (p.lnWorkers - lw) / opts.workersLength;
    const k = p.weight * Math.exp(-dp * dp - dw * dw);
    num += k * p.residual;
    den += k;
  }
  return den > 0 ? num / den : 0;
}
