/**
 * A max-heap of slots (0..n-1) keyed by a gain per slot, ties to the lower rank. Parallel typed
 * arrays instead of objects: the marginal-gain loop pops ~100,000 times per round at the paper's
 * scale, and pointer-free comparisons keep that in the tens of milliseconds.
 * Each slot is in the heap at most once (the caller pops a slot before pushing it again).
 */
export class GainHeap {
  /** Gain of each slot; the caller writes it before `push`. */
  readonly gain: Float64Array;
  private readonly rank: Int32Array;
  private readonly heap: Int32Array;
  private size = 0;

  constructor(ranks: readonly number[]) {
    this.gain = new Float64Array(ranks.length);
    this.rank = Int32Array.from(ranks);
    this.heap = new Int32Array(ranks.length);
  }

  get length(): number {
    return this.size;
  }

  private before(a: number, b: number): boolean {
    const ga = this.gain[a] ?? 0;
    const gb = this.gain[b] ?? 0;
    return ga > gb || (ga === gb && (this.rank[a] ?? 0) < (this.rank[b] ?? 0));
  }

  push(slot: number): void {
    const h = this.heap;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] ?? 0;
      if (!this.before(slot, p)) break;
      h[i] = p;
      i = parent;
    }
    h[i] = slot;
  }

  /** The slot with the largest gain, or -1 when empty. */
  pop(): number {
    if (this.size === 0) return -1;
    const h = this.heap;
    const top = h[0] ?? -1;
    const last = h[--this.size] ?? 0;
    const n = this.size;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let child = l;
      if (r < n && this.before(h[r] ?? 0, h[l] ?? 0)) child = r;
      const c = h[child] ?? 0;
      if (!this.before(c, last)) break;
      h[i] = c;
      i = child;
    }
    if (n > 0) h[i] = last;
    return top;
  }
}
