/**
 * Scratch memory for one fit, handed out as views of one reusable buffer. Why: V8 allocates a typed
 * array of more than 8 doubles off its heap, at about 1 µs each — measured, that was a third of a
 * speed-model refit (a design matrix, Gram matrices, residual vectors per candidate law). Views cost
 * ~40 ns. Views are valid until the next `reset`; only arrays that die with the fit may come from here.
 */

/** Hands out zero-filled arrays of the given length. */
export type Allocate = (length: number) => Float64Array;

/** Plain allocation (the default wherever a caller keeps the arrays). */
export const freshArrays: Allocate = (length) => new Float64Array(length);

export class ScratchArena {
  private buffer: Float64Array;
  private used = 0;

  constructor(initialLength = 4096) {
    this.buffer = new Float64Array(initialLength);
  }

  /** Makes all the memory available again (earlier views will be overwritten). */
  reset(): void {
    this.used = 0;
  }

  /** A zero-filled view of `length` doubles. */
  take(length: number): Float64Array {
    if (this.used + length > this.buffer.length) {
      // Views already handed out keep the old buffer alive; new ones come from a larger buffer.
      this.buffer = new Float64Array(Math.max(2 * this.buffer.length, length));
      this.used = 0;
    }
    const view = this.buffer.subarray(this.used, this.used + length);
    view.fill(0);
    this.used += length;
    return view;
  }
}
