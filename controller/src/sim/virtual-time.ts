/**
 * Virtual time for the simulator: a clock and timers that the runtime uses exactly as it uses the
 * real ones, except that time moves only when the simulator says so — at full speed, and the same
 * for every run of a seed. One job second is one wall second (scale 1) from a fixed origin.
 */
import type { Clock, TimerHandle, Timers } from '../runtime/clock';

/** A fixed origin (2026-01-01T00:00:00Z), so `ts` fields look like real times and runs repeat. */
export const SIM_ORIGIN_MS = Date.UTC(2026, 0, 1);

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

export class VirtualTime {
  /** Milliseconds since the origin. */
  private nowMs = 0;
  private seq = 0;
  private readonly heap: Entry[] = [];

  readonly clock: Clock = {
    scale: 1,
    originMs: SIM_ORIGIN_MS,
    now: () => this.nowMs / 1000,
    wallMs: () => SIM_ORIGIN_MS + this.nowMs,
    wallMsAfter: (s) => SIM_ORIGIN_MS + this.nowMs + s * 1000,
  };

  readonly timers: Timers = {
    setTimeout: (fn, ms) => {
      const entry: Entry = { at: this.nowMs + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
      this.push(entry);
      return { id: entry };
    },
    clearTimeout: (h: TimerHandle) => {
      (h.id as Entry).cancelled = true;
    },
  };

  /** Seconds since the origin. */
  get seconds(): number {
    return this.nowMs / 1000;
  }

  /** Seconds of the next timer due, or Infinity. */
  nextTimerAt(): number {
    this.dropCancelled();
    const top = this.heap[0];
    return top ? top.at / 1000 : Infinity;
  }

  /** Moves time to `seconds` (never back); a timer due within a microsecond is due now. */
  moveTo(seconds: number): void {
    let ms = seconds * 1000;
    this.dropCancelled();
    const top = this.heap[0];
    // Seconds ↔ ms round-trips must not leave a timer a hair in the future for ever.
    if (top && Math.abs(top.at - ms) < 1e-3) ms = top.at;
    this.nowMs = Math.max(this.nowMs, ms);
  }

  /** Fires every timer due now, in due order (timers they set for now fire too). */
  fireDue(): number {
    let fired = 0;
    for (;;) {
      this.dropCancelled();
      const top = this.heap[0];
      if (!top || top.at > this.nowMs) return fired;
      this.pop();
      fired += 1;
      top.fn();
    }
  }

  private dropCancelled(): void {
    while (this.heap[0]?.cancelled) this.pop();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (!last || h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
