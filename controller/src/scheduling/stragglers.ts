/**
 * Straggler detection (paper §5.2) from the latest step time of each worker.
 *
 * - async: a worker's speed is 1 / its step time; a worker slower than half the median speed
 *   (step time > 2 × median step time) is a straggler — the paper's rule.
 * - sync: every worker waits for the slowest at the barrier, so per-worker speed is read from the
 *   gaps between its gradient pushes; a gap "stands out" when it exceeds the median by
 *   `syncFactor` (default 1.5×) AND lies beyond median + 3 × MAD (median absolute deviation),
 *   so ordinary jitter in a tight group never triggers a restart.
 * Needs at least `minWorkers` (default 3) reports: with two workers there is no majority to
 * say which one is slow.
 */
import type { TrainingMode } from '../models/speed/types';

export interface StragglerOptions {
  readonly asyncFactor?: number;
  readonly syncFactor?: number;
  readonly minWorkers?: number;
}

/** Worker indexes (ascending) to replace; empty when nothing stands out. */
export function detectStragglers(
  mode: TrainingMode,
  stepTimes: Readonly<Record<number, number>> | undefined,
  options: StragglerOptions = {},
): number[] {
  if (!stepTimes) return [];
  const entries = Object.entries(stepTimes)
    .map(([k, v]) => [Number(k), v] as const)
    .filter(([k, v]) => Number.isInteger(k) && k >= 0 && Number.isFinite(v) && v > 0);
  if (entries.length < (options.minWorkers ?? 3)) return [];
  const times = entries.map(([, v]) => v);
  const med = median(times);
  const slow =
    mode === 'async'
      ? (t: number) => t > (options.asyncFactor ?? 2) * med
      : syncRule(times, med, options.syncFactor ?? 1.5);
  return entries
    .filter(([, t]) => slow(t))
    .map(([k]) => k)
    .sort((a, b) => a - b);
}

function syncRule(times: number[], med: number, factor: number): (t: number) => boolean {
  const mad = median(times.map((t) => Math.abs(t - med)));
  return (t) => t > factor * med && t > med + 3 * mad;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}
