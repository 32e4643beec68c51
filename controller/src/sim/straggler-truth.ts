/**
 * The ground truth of stragglers (paper §5.2), for the simulator: a server may run slow for a
 * while (`cluster.slowdowns` of a trace: `{server, from, to?, factor}`, factor ≥ 1 multiplies the
 * step time of every worker on it — contention, a failing disk, thermal throttling). A worker is
 * a straggler while it sits on a slow server; replacing it (moving it elsewhere) ends that.
 *
 * Effect on a job's speed, relative to the same placement with no slowdown:
 * - sync: every step waits at the barrier for the slowest worker, so the job's step time is
 *   multiplied by the largest factor among its workers: factor = 1 / max_i f_i;
 * - async: workers push independently and the job's speed is the sum of theirs:
 *   factor = (1/w) · Σ_i 1/f_i.
 * PS on a slow server are not modelled (the paper replaces slow workers only).
 * Pure; the simulator calls `stragglerSpeedFactor` wherever it computes a job's speed and
 * `nextSlowdownChange` to put an event where a factor changes.
 */
import type { TaskPlacement } from '../scheduling/types';

/** One slow period of one server. */
export interface Slowdown {
  readonly server: string;
  /** Seconds from the trace start; the slowdown holds on [from, to). */
  readonly from: number;
  /** Omitted: to the end of the trace. */
  readonly to?: number | undefined;
  /** ≥ 1: a worker's step time on this server is multiplied by it. */
  readonly factor: number;
}

/** The step-time multiplier of a worker on `server` at time `t` (1 when nothing is slow). */
export function serverSlowdown(slowdowns: readonly Slowdown[], server: string, t: number): number {
  let f = 1;
  for (const s of slowdowns)
    if (s.server === server && t >= s.from && t < (s.to ?? Infinity)) f = Math.max(f, s.factor);
  return f;
}

/** Per worker index, the step-time multiplier at `t`. */
export function workerSlowdowns(
  slowdowns: readonly Slowdown[],
  placement: readonly TaskPlacement[],
  t: number,
): Map<number, number> {
  const out = new Map<number, number>();
  for (const task of placement)
    if (task.role === 'worker') out.set(task.index, serverSlowdown(slowdowns, task.server, t));
  return out;
}

/** The job's speed multiplier (≤ 1) at `t` for its placement and mode (see the file comment). */
export function stragglerSpeedFactor(o: {
  readonly mode: 'sync' | 'async';
  readonly placement: readonly TaskPlacement[];
  readonly slowdowns: readonly Slowdown[];
  readonly t: number;
}): number {
  const factors = [...workerSlowdowns(o.slowdowns, o.placement, o.t).values()];
  if (factors.length === 0) return 1;
  if (o.mode === 'sync') return 1 / Math.max(...factors);
  return factors.reduce((s, f) => s + 1 / f, 0) / factors.length;
}

/**
 * The step time each worker's sidecar reports at `t` (what the straggler detector reads), given
 * the job's step time with no slowdown: sync workers compute `baseStepSec · f_i` before the
 * barrier, async workers run their whole step `f_i` times slower.
 */
export function observedWorkerStepTimes(o: {
  readonly baseStepSec: number;
  readonly placement: readonly TaskPlacement[];
  readonly slowdowns: readonly Slowdown[];
  readonly t: number;
}): Record<number, number> {
  const out: Record<number, number> = {};
  for (const [index, f] of workerSlowdowns(o.slowdowns, o.placement, o.t)) out[index] = o.baseStepSec * f;
  return out;
}

/** The first time after `t` at which any slowdown starts or ends (Infinity when none does). */
export function nextSlowdownChange(slowdowns: readonly Slowdown[], t: number): number {
  let next = Infinity;
  for (const s of slowdowns) {
    if (s.from > t) next = Math.min(next, s.from);
    if (s.to !== undefined && s.to > t) next = Math.min(next, s.to);
  }
  return next;
}
