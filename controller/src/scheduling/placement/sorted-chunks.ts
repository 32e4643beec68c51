/**
 * A sorted list of integers kept as chunks of a few hundred (the layout of Python's
 * sortedcontainers): insert and remove cost a binary search plus a splice of one short chunk,
 * instead of moving half of a 16,000-element array; in-order iteration stays a plain loop.
 */
export class SortedChunks {
  private readonly chunks: number[][] = [];

  /**
   * @param sorted items already in order
   * @param compare negative when a comes before b; must be a total order on the items
   */
  constructor(
    sorted: readonly number[],
    private readonly compare: (a: number, b: number) => number,
    private readonly load = 256,
  ) {
    for (let i = 0; i < sorted.length; i += load) this.chunks.push(sorted.slice(i, i + load));
  }

  get size(): number {
    let n = 0;
    for (const c of this.chunks) n += c.length;
    return n;
  }

  /** Calls `visit` in order until it returns true. */
  visit(visit: (item: number) => boolean): void {
    for (const chunk of this.chunks) for (const item of chunk) if (visit(item)) return;
  }

  /** All items in order (for tests and debugging). */
  toArray(): number[] {
    return this.chunks.flat();
  }

  insert(item: number): void {
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      return;
    }
    const c = this.chunkFor(item);
    const chunk = this.chunks[c] ?? [];
    chunk.splice(this.lowerBound(chunk, item), 0, item);
    if (chunk.length > 2 * this.load) this.chunks.splice(c + 1, 0, chunk.splice(this.load));
  }

  /** Removes `item`, which must still compare as it did when inserted. False if absent. */
  remove(item: number): boolean {
    if (this.chunks.length === 0) return false;
    const c = this.chunkFor(item);
    const chunk = this.chunks[c] ?? [];
    const at = this.lowerBound(chunk, item);
    if (chunk[at] !== item) return false;
    chunk.splice(at, 1);
    if (chunk.length === 0) this.chunks.splice(c, 1);
    return true;
  }

  /** The first chunk whose last item does not come before `item` (else the last chunk). */
  private chunkFor(item: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.chunks[mid] ?? [];
      if (this.compare(chunk[chunk.length - 1] ?? 0, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private lowerBound(chunk: readonly number[], item: number): number {
    let lo = 0;
    let hi = chunk.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.compare(chunk[mid] ?? 0, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
