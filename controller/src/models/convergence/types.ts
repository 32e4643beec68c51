/** Contracts of the convergence model (paper §3.1, Eq. 1). Pure data. */

/** One training-loss observation at global step `step` (steps counted from 0). */
export interface LossPoint {
  readonly step: number;
  readonly loss: number;
}

/** The convergence rule: per-epoch decrease of normalised loss below `threshold` for `patience` epochs. */
export interface ConvergenceRule {
  readonly stepsPerEpoch: number;
  /** δ, e.g. 0.01–0.05. */
  readonly threshold: number;
  /** K, the number of consecutive epochs. */
  readonly patience: number;
}

export type ConvergenceEstimate =
  | {
      readonly status: 'ok';
      /** Predicted total steps to convergence, with a prediction interval. */
      readonly predictedTotalSteps: number;
      readonly lower: number;
      readonly upper: number;
      /** predictedTotalSteps minus the steps already done (≥ 0). */
      readonly remainingSteps: number;
      readonly beta: readonly [number, number, number];
      /** True when the rule is already met within the epochs done (judged on the fitted curve, not the noise). */
      readonly converged: boolean;
      /**
       * Step where the fitted curve starts: β describes l(step − fitStartStep). 0 unless a learning-rate
       * drop was detected or a fit with a delayed origin after a warm-up predicted (ADR 0022). (Optional for
       * compatibility.)
       */
      readonly fitStartStep?: number;
      /** Step of the last detected learning-rate drop, when one was detected. */
      readonly lrDropStep?: number;
      /**
       * Present when an exponential l(k) = a·e^(−r·k) + c (k = step − fitStartStep) fitted the loss far
       * better than Eq. 1 and gave the prediction; `beta` is then our Eq. 1 fit, for comparison.
       */
      readonly exponential?: ExponentialCurve;
    }
  | { readonly status: 'insufficient-data'; readonly reason: string };

/** An exponentially flattening loss curve, in raw loss units and steps. */
export interface ExponentialCurve {
  readonly a: number;
  readonly r: number;
  readonly c: number;
}
