/**
 * The runtime's clock. Policies and models see "job seconds": in local mode time can be
 * accelerated (`--time-scale`), so one wall second is `scale` job seconds. The origin is
 * persisted so job seconds keep counting across controller restarts.
 */
export interface Clock {
  /** Job seconds since the origin. */
  now(): number;
  /** Wall-clock ms since the Unix epoch (the `ts` of wire messages). */
  wallMs(): number;
  /** Wall-clock ms when `jobSeconds` from now will have passed. */
  wallMsAfter(jobSeconds: number): number;
  readonly scale: number;
  readonly originMs: number;
}

/**
 * Job seconds to the millisecond, without float noise: `0.1 * 3` would otherwise reach JSON as
 * 0.30000000000000004. Differences of rounded times (a JCT) need rounding again.
 */
export const roundSec = (s: number): number => Math.round(s * 1000) / 1000;

/** A clock over `Date.now` (or an injected source, for tests). Times are whole ms / ms-rounded seconds. */
export function scaledClock(opts: { scale: number; originMs: number; source?: () => number }): Clock {
  const source = opts.source ?? Date.now;
  return {
    scale: opts.scale,
    originMs: opts.originMs,
    now: () => roundSec(((source() - opts.originMs) * opts.scale) / 1000),
    wallMs: source,
    wallMsAfter: (s) => Math.round(source() + (s * 1000) / opts.scale),
  };
}

/** A timer handle of {@link Timers}. */
export interface TimerHandle {
  readonly id: unknown;
}

/**
 * Timers, injected like the clock: real ones in local mode and Kubernetes, virtual ones in the
 * simulator (which then runs the same runtime at full speed).
 */
export interface Timers {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}
