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

/** A clock over `Date.now` (or an injected source, for tests). */
export function scaledClock(opts: { scale: number; originMs: number; source?: () => number }): Clock {
  const source = opts.source ?? Date.now;
  return {
    scale: opts.scale,
    originMs: opts.originMs,
    now: () => ((source() - opts.originMs) * opts.scale) / 1000,
    wallMs: source,
    wallMsAfter: (s) => source() + (s * 1000) / opts.scale,
  };
}
