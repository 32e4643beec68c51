/**
 * Figures of the rollouts a controller ran (the simulator reports them): how long each took from
 * its target to the observation that it was reached (the in-flight window), and what each measured
 * restart cost. Wall ms in, seconds out; bounded (the newest are kept).
 */
const MAX_KEPT = 100_000;

export interface RolloutFigures {
  /** Rollouts that reached their target, and rollouts given up. */
  readonly landed: number;
  readonly gaveUp: number;
  /** Seconds from target to reached, per landed rollout (in order). */
  readonly latencySec: readonly number[];
  /** Seconds every rollout (landed or given up) was in flight, summed. */
  readonly inFlightSec: number;
  /** Measured restart costs (SIGTERM → first step), job seconds. */
  readonly restartSec: readonly number[];
}

export class RolloutStats {
  private landedN = 0;
  private gaveUpN = 0;
  private readonly latency: number[] = [];
  private readonly restarts: number[] = [];
  private inFlightMs = 0;

  landed(sinceMs: number, atMs: number): void {
    this.landedN += 1;
    this.inFlightMs += atMs - sinceMs;
    push(this.latency, (atMs - sinceMs) / 1000);
  }

  gaveUp(sinceMs: number, atMs: number): void {
    this.gaveUpN += 1;
    this.inFlightMs += atMs - sinceMs;
  }

  restart(sec: number): void {
    push(this.restarts, sec);
  }

  figures(): RolloutFigures {
    return {
      landed: this.landedN,
      gaveUp: this.gaveUpN,
      latencySec: [...this.latency],
      inFlightSec: this.inFlightMs / 1000,
      restartSec: [...this.restarts],
    };
  }
}

function push(into: number[], v: number): void {
  into.push(v);
  if (into.length > MAX_KEPT) into.splice(0, into.length - MAX_KEPT);
}
