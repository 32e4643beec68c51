/**
 * The convergence rule: with ℓ the epoch losses divided by the largest of them, a job converges at the first
 * epoch e such that ℓ(j−1) − ℓ(j) < δ for every j in e−K+1..e (epochs numbered from 0, so e ≥ K).
 */

export interface RuleScan {
  /** Loss of epoch e (any scale; it is divided by `normaliser`). */
  readonly epochLoss: (epoch: number) => number;
  readonly normaliser: number;
  readonly threshold: number;
  readonly patience: number;
  /** Epochs 0..scanUpTo are scanned one by one; they may go up and down (observed data). */
  readonly scanUpTo: number;
  /**
   * True when the per-epoch decrease never grows after `scanUpTo` (a convex decreasing curve such as a
   * fitted Eq. 1), which allows a binary search instead of a walk over a possibly very long tail.
   */
  readonly convexTail: boolean;
  /** Give up (return null) beyond this epoch. */
  readonly maxEpoch: number;
}

/**
 * Applies the rule to a finite list of epoch losses (e.g. the observed ones).
 * @returns the convergence epoch, or null when the rule is not met within the list.
 */
export function convergedEpochOf(
  losses: readonly number[],
  threshold: number,
  patience: number,
): number | null {
  const normaliser = losses.reduce((m, l) => Math.max(m, l), -Infinity);
  return firstConvergedEpoch({
    epochLoss: (e) => losses[e] ?? NaN,
    normaliser,
    threshold,
    patience,
    scanUpTo: losses.length - 1,
    convexTail: false,
    maxEpoch: losses.length - 1,
  });
}

/** First epoch j > from whose decrease is below δ, on a convex tail (decreases never grow). */
function firstSmallDecrease(s: RuleScan, from: number): number | null {
  let hi = from + 1;
  let lo = from; // invariant: small(lo) is false (or lo = from), small(hi) is the probe
  while (!isSmall(s, hi)) {
    lo = hi;
    hi = from + 2 * (hi - from);
    if (hi > s.maxEpoch) {
      if (!isSmall(s, s.maxEpoch)) return null;
      hi = s.maxEpoch;
      break;
    }
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (isSmall(s, mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

function isSmall(s: RuleScan, j: number): boolean {
  return decrease(s, j) < s.threshold;
}

function decrease(s: RuleScan, j: number): number {
  return (s.epochLoss(j - 1) - s.epochLoss(j)) / s.normaliser;
}

/** Applies the rule to an epoch-loss sequence: a walk over the scanned part, then a search of the tail. */
export function firstConvergedEpoch(s: RuleScan): number | null {
  if (!(s.patience >= 1) || !(s.normaliser > 0)) return null;
  let run = 0;
  const scanEnd = Math.min(s.scanUpTo, s.maxEpoch);
  for (let j = 1; j <= scanEnd; j++) {
    run = decrease(s, j) < s.threshold ? run + 1 : 0;
    if (run >= s.patience) return j;
  }
  if (!s.convexTail || scanEnd >= s.maxEpoch) return null;
  const start = Math.max(scanEnd, 0);
  // The run in progress continues if the next decrease is already small: the tail's decreases only shrink.
  if (run > 0 && decrease(s, start + 1) < s.threshold) {
    const e = start + (s.patience - run);
    return e <= s.maxEpoch ? e : null;
  }
  const first = firstSmallDecrease(s, start);
  if (first === null) return null;
  const e = Math.max(first + s.patience - 1, s.patience);
  return e <= s.maxEpoch ? e : null;
}
