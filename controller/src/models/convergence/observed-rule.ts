/**
 * The convergence rule applied to what a job has logged (the paper's definition of done, §3.1): the
 * mean loss of each completed epoch, divided by the largest of them, has fallen by less than δ for
 * K consecutive epochs. Pure. The runtime ends a job when this holds, whatever the fitted curve says.
 */
import { convergedEpochOf } from './rule';
import type { ConvergenceRule } from './types';

export interface ObservedConvergence {
  /** The epoch at which the rule first held, or null when it has not. */
  readonly epoch: number | null;
  /** Completed epochs the rule was applied to. */
  readonly epochs: number;
}

/**
 * Applies the rule to per-epoch sums and counts kept as the points arrived (the runtime keeps them,
 * so checking costs the number of epochs, not of points). A point at step s belongs to epoch
 * ⌈s / stepsPerEpoch⌉ − 1; only epochs that `stepsDone` has completed count, so a half-logged epoch
 * never looks flat.
 */
export function convergenceOfEpochs(
  byEpoch: ReadonlyMap<number, { readonly sum: number; readonly n: number }>,
  rule: ConvergenceRule,
  stepsDone: number,
): ObservedConvergence {
  const complete = Math.floor(stepsDone / rule.stepsPerEpoch);
  if (!(complete > rule.patience) || !(rule.stepsPerEpoch > 0))
    return { epoch: null, epochs: Math.max(0, complete) };
  // Epochs without a point (a sidecar gap) are left out rather than read as a flat loss.
  const epochs = [...byEpoch]
    .filter(([e, a]) => e >= 0 && e < complete && a.n > 0)
    .sort((x, y) => x[0] - y[0]);
  const at = convergedEpochOf(
    epochs.map(([, { sum, n }]) => sum / n),
    rule.threshold,
    rule.patience,
  );
  return { epoch: at === null ? null : (epochs[at]?.[0] ?? null), epochs: epochs.length };
}
