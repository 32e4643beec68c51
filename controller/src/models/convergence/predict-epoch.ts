/** Applies the convergence rule to a fitted Eq. 1 curve joined to the observed epochs before its segment. */
import type { Beta } from './curve';
import { meanLoss } from './curve';
import { firstConvergedEpoch } from './rule';
import type { ConvergenceRule } from './types';

export interface PredictContext {
  readonly rule: ConvergenceRule;
  /** Step where the fitted segment starts (0 unless a learning-rate drop was detected). */
  readonly segmentStart: number;
  /** Observed (normalised) epoch means by epoch; only those before the segment's epoch are used. */
  readonly observed: (epoch: number) => number;
  /** Give up beyond this epoch. */
  readonly maxEpoch: number;
}

/**
 * Epoch-loss sequence used by the rule: observed means before the segment, the fitted curve's exact mean over
 * each epoch from the segment on. The fitted curve (not the noisy data) also provides the normaliser of the
 * segment, which without a drop is the fitted epoch 0: the max of noisy observed means would be biased up.
 */
export function epochLossSequence(
  meanOver: (from: number, to: number) => number,
  ctx: PredictContext,
): {
  epochLoss: (e: number) => number;
  normaliser: number;
  segmentEpoch: number;
} {
  const segmentEpoch = Math.floor(ctx.segmentStart / ctx.rule.stepsPerEpoch);
  const epochLoss = epochLossOf(meanOver, ctx, segmentEpoch);
  let normaliser = epochLoss(segmentEpoch);
  for (let e = 0; e < segmentEpoch; e++) normaliser = Math.max(normaliser, epochLoss(e));
  return { epochLoss, normaliser, segmentEpoch };
}

/**
 * The epoch-loss function. Built here and returned (not bound to a local name) because the dev loader
 * (tsx, keepNames) wraps every named closure in a defineProperty call, which thousands of refits notice.
 */
function epochLossOf(
  meanOver: (from: number, to: number) => number,
  ctx: PredictContext,
  segmentEpoch: number,
): (e: number) => number {
  const s = ctx.rule.stepsPerEpoch;
  return (e) => {
    if (e < segmentEpoch) return ctx.observed(e);
    const from = Math.max(0, e * s - ctx.segmentStart);
    return meanOver(from, (e + 1) * s - ctx.segmentStart);
  };
}

/** The convergence epoch predicted by the fitted Eq. 1 curve, or null beyond `maxEpoch`. */
export function predictEpoch(beta: Beta, ctx: PredictContext): number | null {
  return predictEpochWith((from, to) => meanLoss(beta, from, to), ctx);
}

/**
 * The same for any convex decreasing curve given by its mean over [from, to) (steps since the segment start).
 */
export function predictEpochWith(
  meanOver: (from: number, to: number) => number,
  ctx: PredictContext,
): number | null {
  const { epochLoss, normaliser, segmentEpoch } = epochLossSequence(meanOver, ctx);
  return firstConvergedEpoch({
    epochLoss,
    normaliser,
    threshold: ctx.rule.threshold,
    patience: ctx.rule.patience,
    scanUpTo: segmentEpoch,
    convexTail: true,
    maxEpoch: ctx.maxEpoch,
  });
}
