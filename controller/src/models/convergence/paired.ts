/**
 * Ours against the paper's procedure fit by fit. Errors are multiples of 1/epochs, so the medians
 * of two procedures tie whenever both are one epoch off on most fits, and a median says nothing
 * about the fits where they differ. Counting, on the same points, which one is closer and testing
 * the count (an exact two-sided sign test over the fits that do not tie) says whether either is
 * better, and by how many fits. Pure.
 */
import { binomialDistribution, errorFunction } from 'simple-statistics';

export interface PairedComparison {
  /** Fits where ours is strictly closer to the truth. */
  readonly oursCloser: number;
  /** Fits where both are equally close (usually: the same epoch). */
  readonly ties: number;
  readonly paperCloser: number;
  /** Two-sided sign test over the fits that do not tie; 1 when every fit ties. */
  readonly p: number;
  readonly verdict: PairedVerdict;
}

/** 'better'/'worse': ours is closer more often than the paper's (or less often) at p < `ALPHA`. */
export type PairedVerdict = 'better' | 'worse' | 'no difference';

export const ALPHA = 0.05;

/** Above this many untied pairs 0.5^n underflows; the normal approximation is then exact enough. */
const EXACT_UP_TO = 1000;

/**
 * Two-sided p-value of `wins` against `losses` when either is equally likely.
 * @example signTestP(9, 1) // 0.0215
 */
export function signTestP(wins: number, losses: number): number {
  const n = wins + losses;
  if (n === 0) return 1;
  const k = Math.min(wins, losses);
  if (n > EXACT_UP_TO) {
    // Continuity-corrected; the library's erf is good to ~1e-7, its normal CDF only to a table's 1e-4.
    const z = (k + 0.5 - n / 2) / Math.sqrt(n / 4);
    return Math.min(1, Math.max(0, 1 + errorFunction(z / Math.SQRT2)));
  }
  // The library lists the masses from 0 up to where they sum to nearly 1, which is past n/2 ≥ k.
  const mass = binomialDistribution(n, 0.5) ?? [];
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += mass[i] ?? 0;
  return Math.min(1, 2 * tail);
}

/** Pairs (our error, the paper's error) on the same fits; an abstention scored as the caller scores it. */
export function comparePaired(pairs: readonly (readonly [number, number])[]): PairedComparison {
  let oursCloser = 0;
  let paperCloser = 0;
  for (const [ours, paper] of pairs) {
    // Equal predictions give bit-equal errors; the margin only absorbs rounding of equal distances.
    if (ours < paper - 1e-12) oursCloser++;
    else if (paper < ours - 1e-12) paperCloser++;
  }
  const p = signTestP(oursCloser, paperCloser);
  const verdict: PairedVerdict =
    p >= ALPHA || oursCloser === paperCloser
      ? 'no difference'
      : oursCloser > paperCloser
        ? 'better'
        : 'worse';
  return { oursCloser, ties: pairs.length - oursCloser - paperCloser, paperCloser, p, verdict };
}
