/**
 * A token bucket: at most `ratePerSec` messages a second, in bursts of at most `burst` (which the
 * caller may change, e.g. when the broker's Receive Maximum shrinks the window). Paces resends so
 * that a long backlog never bursts into the broker's queue.
 */
export class Pacer {
  private tokens: number;
  private lastRefill: number;

  constructor(
    private readonly ratePerSec: number,
    private readonly now: () => number,
    burst: number,
  ) {
    this.tokens = burst;
    this.lastRefill = now();
  }

  /** Adds what the time since the last refill earned, up to `burst`. */
  refill(burst: number): void {
    const now = this.now();
    this.tokens = Math.min(burst, this.tokens + ((now - this.lastRefill) / 1000) * this.ratePerSec);
    this.lastRefill = now;
  }

  /** Takes one token; false when none is left. */
  take(): boolean {
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }

  /** Ms until the next token (at least 1). */
  msUntilNext(): number {
    return Math.max(1, Math.ceil(((1 - this.tokens) / this.ratePerSec) * 1000));
  }
}
