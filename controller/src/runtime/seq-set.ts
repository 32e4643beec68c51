/**
 * The set of sequence numbers received from one task, kept as disjoint ranges [lo, hi] in a
 * red-black tree keyed by `lo` (js-sdsl's OrderedMap): a sidecar's seqs are nearly contiguous, so the
 * tree stays tiny however long the job runs, and a task that sends scattered seqs (a hostile or broken
 * sidecar) costs O(log r) per lookup and insert for r ranges, never a scan or an array shift.
 */
import { OrderedMap } from '@js-sdsl/ordered-map';

export class SeqSet {
  /** lo → hi of disjoint, non-adjacent inclusive ranges. */
  private readonly ranges = new OrderedMap<number, number>();
  private count = 0;

  /** Adds `seq`; returns false when it was already present (a duplicate). */
  add(seq: number): boolean {
    const prev = this.containingOrBefore(seq);
    if (prev !== null && prev[1] >= seq) return false;
    const nextIt = this.ranges.upperBound(seq);
    const next = nextIt.equals(this.ranges.end()) ? null : nextIt.pointer;
    const joinPrev = prev !== null && prev[1] === seq - 1;
    const joinNext = next !== null && next[0] === seq + 1;
    if (joinPrev && joinNext) {
      const hi = next[1];
      this.ranges.eraseElementByIterator(nextIt);
      this.ranges.setElement(prev[0], hi);
    } else if (joinPrev) this.ranges.setElement(prev[0], seq);
    else if (joinNext) {
      const hi = next[1];
      this.ranges.eraseElementByIterator(nextIt);
      this.ranges.setElement(seq, hi);
    } else this.ranges.setElement(seq, seq);
    this.count += 1;
    return true;
  }

  has(seq: number): boolean {
    const r = this.containingOrBefore(seq);
    return r !== null && r[1] >= seq;
  }

  /** The contiguous run of stored seqs containing `seq`, or null when `seq` is absent. */
  rangeOf(seq: number): { from: number; through: number } | null {
    const r = this.containingOrBefore(seq);
    return r !== null && r[1] >= seq ? { from: r[0], through: r[1] } : null;
  }

  get size(): number {
    return this.count;
  }

  /** Number of disjoint runs (1 for a sidecar that never lost a record). */
  get runs(): number {
    return this.ranges.size();
  }

  /** Highest seq seen, or -1. */
  get max(): number {
    return this.ranges.back()?.[1] ?? -1;
  }

  /** The range with the greatest lo ≤ seq, as [lo, hi], or null. */
  private containingOrBefore(seq: number): [number, number] | null {
    const it = this.ranges.reverseLowerBound(seq);
    if (it.equals(this.ranges.rEnd())) return null;
    const [lo, hi] = it.pointer;
    return [lo, hi];
  }
}
