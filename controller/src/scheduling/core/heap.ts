/**
 * A binary heap ordered by a comparator (smallest first). The marginal-gain loop pops the job
 * with the largest gain ~100,000 times per round at the paper's scale, so O(log n) matters.
 */
export class BinaryHeap<T> {
  private readonly items: T[] = [];

  /** `before(a, b)` is true when `a` must come out before `b`. */
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as T;
      if (!this.before(item, p)) break;
      items[i] = p;
      i = parent;
    }
    items[i] = item;
  }

  /** The item `pop` would return, left in place. */
  peek(): T | undefined {
    return this.items[0];
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let i = 0;
    const n = items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let child = l;
      if (r < n && this.before(items[r] as T, items[l] as T)) child = r;
      const c = items[child] as T;
      if (!this.before(c, last)) break;
      items[i] = c;
      i = child;
    }
    items[i] = last;
    return top;
  }
}
