/**
 * When rounds run: every scheduling interval, and soon after anything asks for one. Rounds never
 * overlap; requests while one is pending coalesce — the earliest asked for wins (a rollout's
 * requeue hint is never put off by a later request), and a full request upgrades a pre-run one.
 * Timers are injected, so the simulator drives the same scheduler on virtual time.
 */
import type { TimerHandle, Timers } from './clock';
import type { RoundKind } from './round';

export interface RoundSchedulerOptions {
  readonly timers: Timers;
  /** Wall ms between two full rounds. */
  readonly periodMs: number;
  readonly run: (kind: RoundKind) => Promise<void>;
  readonly onError: (err: unknown) => void;
  /**
   * Full rounds asked for by events (arrivals, completions) run at most this often: a burst of
   * events costs one policy call, as a controller batches its work queue. Default 0.
   */
  readonly minFullGapMs?: number;
  /** Wall ms now (for the gap). */
  readonly nowMs?: () => number;
}

export class RoundScheduler {
  private chain: Promise<void> = Promise.resolve();
  private pending: { kind: RoundKind; timer: TimerHandle; dueMs: number } | null = null;
  private periodic: TimerHandle | null = null;
  private stopped = false;
  private lastFullMs = -Infinity;

  constructor(private readonly o: RoundSchedulerOptions) {}

  /** Starts the periodic full rounds, the first one at once. */
  start(): void {
    this.tick();
  }

  /** Asks for a round in `delayMs`. */
  request(kind: RoundKind, delayMs = 100): void {
    if (this.stopped) return;
    const gap = this.o.minFullGapMs ?? 0;
    if (kind === 'full' && gap > 0 && this.o.nowMs) {
      const wait = this.lastFullMs + gap - this.o.nowMs();
      if (wait > delayMs) {
        // Too soon for another policy call: a cheap round now, the full one once the gap is over.
        this.request('pre-run', delayMs);
        this.deferFull(wait);
        return;
      }
    }
    const now = this.o.nowMs?.() ?? 0;
    if (this.pending) {
      if (kind === 'full') this.pending.kind = 'full';
      // Sooner than the pending one: it moves up (without a clock, the first request stands).
      if (!this.o.nowMs || now + delayMs >= this.pending.dueMs) return;
      this.o.timers.clearTimeout(this.pending.timer);
      kind = this.pending.kind;
    }
    const timer = this.o.timers.setTimeout(() => {
      const k = this.pending?.kind ?? kind;
      this.pending = null;
      this.enqueue(k);
    }, delayMs);
    this.pending = { kind, timer, dueMs: now + delayMs };
  }

  /** Runs a round now (after any in flight) and resolves when it is done; for tests and tools. */
  async now(kind: RoundKind): Promise<void> {
    const run = this.chain.then(() => this.o.run(kind));
    // The caller gets the failure; the chain must not keep it, or later rounds and stop() would.
    this.chain = run.catch(() => {});
    await run;
  }

  /** Resolves once the rounds queued so far have run. */
  async drained(): Promise<void> {
    await this.chain;
  }

  /** Stops scheduling and waits for the round in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.periodic) this.o.timers.clearTimeout(this.periodic);
    if (this.pending) this.o.timers.clearTimeout(this.pending.timer);
    if (this.deferred) this.o.timers.clearTimeout(this.deferred);
    this.pending = null;
    this.deferred = null;
    await this.chain;
  }

  private deferred: TimerHandle | null = null;

  private deferFull(waitMs: number): void {
    if (this.deferred) return;
    this.deferred = this.o.timers.setTimeout(() => {
      this.deferred = null;
      this.request('full', 0);
    }, waitMs);
  }

  private tick(): void {
    if (this.stopped) return;
    this.request('full', 0);
    this.periodic = this.o.timers.setTimeout(() => this.tick(), this.o.periodMs);
  }

  private enqueue(kind: RoundKind): void {
    if (this.stopped) return;
    if (kind === 'full' && this.o.nowMs) this.lastFullMs = this.o.nowMs();
    this.chain = this.chain.then(() => this.o.run(kind)).catch(this.o.onError);
  }
}
