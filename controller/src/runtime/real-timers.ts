/**
 * Node's timers behind the {@link Timers} port. Its own file: the clock module is shared with the
 * dashboard's browser code, which has no Node timers.
 */
import type { Timers } from './clock';

/** Node's timers. Unref'd: a pending round never keeps a finished process alive. */
export const realTimers: Timers = {
  // Node caps a delay at 2^31 − 1 ms (about 24.8 days) and fires longer ones at once.
  setTimeout: (fn, ms) => ({ id: setTimeout(fn, Math.min(ms, 2 ** 31 - 1)).unref() }),
  clearTimeout: (h) => clearTimeout(h.id as NodeJS.Timeout),
};
