/**
 * Browser-side formatting of the dashboard. One clock on every screen: durations and times are
 * job time (local mode accelerates it; in a cluster it is wall time); a wall-clock time is only
 * ever shown labelled "wall clock".
 */
import { compactDuration, duration } from '../format';
import type { Interval } from '../job-rows';

export const clockTime = (ms: number): string =>
  new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** "≈ 14:05:12 wall clock": the only form a wall-clock time takes on the page. */
export const wallClock = (ms: number): string => `≈ ${clockTime(ms)} wall clock`;

/** "in 3 min 40 s (2 min 40 s – 5 min)": predicted remaining job time with its interval. */
export function remainingText(r: Interval | null): string {
  if (r === null) return '—';
  return `in ${duration(r.value)} (${duration(r.lower)} – ${duration(r.upper)})`;
}

/** "at 12 min 5 s": a moment in job time (job seconds since the run's start). */
export const atJobTime = (sec: number): string => `at ${duration(sec)}`;

/** Axis ticks in job time: "0", "5m", "1h20m". */
export const jobTimeTicks = (_u: unknown, splits: number[]): string[] =>
  splits.map((s) => (s === 0 ? '0' : compactDuration(s)));

/** "42 %", with a no-break space: the sign never wraps away from its number. */
export const percent = (p: number | null): string => (p === null ? '—' : `${Math.floor(p * 100)}\u00a0%`);

export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
}

export const PHASE_LABEL: Readonly<Record<string, string>> = {
  pending: 'pending',
  'pre-run': 'pre-run',
  running: 'running',
  resizing: 'resizing',
  waiting: 'waiting',
  done: 'done',
  failed: 'failed',
};
