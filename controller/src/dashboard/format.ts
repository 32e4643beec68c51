/** Number and time formatting shared by the dashboard's server side and its browser code. Pure. */

/**
 * A duration in words, two units at most.
 * @example duration(75) // "1 min 15 s"
 * @example duration(7300) // "2 h 2 min"
 */
export function duration(sec: number): string {
  if (!Number.isFinite(sec)) return '—';
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** "1.23", "45.6", "789": three significant digits, no float noise. */
export function num(x: number): string {
  if (!Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  if (a >= 100 || a === 0) return String(Math.round(x));
  return String(+x.toPrecision(3));
}

/**
 * A duration in the fewest characters, for a terminal column.
 * @example compactDuration(336) // "5m36s"
 */
export function compactDuration(sec: number): string {
  if (!Number.isFinite(sec)) return '—';
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
}

/** Cuts `s` to `width` characters (an ellipsis marks the cut). */
export function fit(s: string, width: number): string {
  const chars = [...s];
  return chars.length <= width ? s : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** The runtime clock, as the dashboard reads it (local mode accelerates time). */
export interface JobClock {
  /** Job seconds now. */
  now(): number;
  /** Wall ms now. */
  wallMs(): number;
  /** Job seconds per wall second. */
  readonly scale: number;
}

/**
 * Job seconds at wall time `wallMs`: the one clock every screen shows (wall-clock time appears
 * only where it is labelled so).
 * @example jobSeconds({ now: () => 60, wallMs: () => 4000, scale: 20 }, 3000) // 40
 */
export const jobSeconds = (c: JobClock, wallMs: number): number =>
  Math.round((c.now() + ((wallMs - c.wallMs()) * c.scale) / 1000) * 10) / 10;
