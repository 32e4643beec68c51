/** Browser-side formatting of the dashboard's rows (times in the viewer's locale). */
import { duration } from '../format';
import type { Interval } from '../job-rows';

export const clockTime = (ms: number): string =>
  new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** "14:05:12, in 2 min (1 min 50 s – 3 min)": wall-clock completion and how long from now. */
export function completionText(c: Interval | null, now: number): string {
  if (c === null) return '—';
  const rel = (ms: number) => duration((ms - now) / 1000);
  return `${clockTime(c.value)}, in ${rel(c.value)} (${rel(c.lower)} – ${rel(c.upper)})`;
}

export const percent = (p: number | null): string => (p === null ? '—' : `${Math.floor(p * 100)} %`);

export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
}

export const PHASE_LABEL: Readonly<Record<string, string>> = {
  pending: 'pending',
  'pre-run': 'pre-run',
  running: 'running',
  waiting: 'waiting',
  done: 'done',
  failed: 'failed',
};
