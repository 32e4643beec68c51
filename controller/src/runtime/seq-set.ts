/**
 * The set of sequence numbers received from one task, kept as sorted disjoint ranges:
 * a sidecar's seqs are nearly contiguous, so this stays tiny however long the job runs.
 */
export class SeqSet {
  /** Sorted, disjoint, non-adjacent inclusive ranges [lo, hi]. */
  private ranges: [number, number][] = [];
  private count = 0;

  /** Adds `seq`; returns false when it was already present (a duplicate). */
  add(seq: number): boolean {
    const r = this.ranges;
    let lo = 0;
    let hi = r.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r[mid]![1] < seq) lo = mid + 1;
      else hi = mid;
    }
    const at = r[lo];
    if (at && at[0] <= seq) return false;
    const prev = r[lo - 1];
    const joinPrev = prev !== undefined && prev[1] === seq - 1;
    const joinNext = at !== undefined && at[0] === seq + 1;
    if (joinPrev && joinNext) {
      prev[1] = at[1];
      r.splice(lo, 1);
    } else if (joinPrev) prev[1] = seq;
    else if (joinNext) at[0] = seq;
    else r.splice(lo, 0, [seq, seq]);
    this.count += 1;
    return true;
  }

  has(seq: number): boolean {
    return this.ranges.some(([a, b]) => a <= seq && seq <= b);
  }

  get size(): number {
    return this.count;
  }

  /** Highest seq seen, or -1. */
  get max(): number {
    return this.ranges.at(-1)?.[1] ?? -1;
  }
}
