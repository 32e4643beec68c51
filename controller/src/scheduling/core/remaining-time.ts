/** Remaining time of a job at a shape: remaining steps / predicted steps per second. */
import type { PreparedJob } from './prepare';

/** Seconds to finish at (ps, workers); Infinity when the model predicts no progress. */
export function remainingSeconds(job: PreparedJob, ps: number, workers: number): number {
  const steps = job.steps;
  if (steps <= 0) return 0;
  const speed = job.speed.predict(ps, workers).stepsPerSec;
  return Number.isFinite(speed) && speed > 0 ? steps / speed : Infinity;
}

/**
 * Time saved by going from shape a to shape b; NaN-free (∞ − ∞ counts as no saving, and
 * leaving an infinite time for a finite one counts as an infinite saving).
 */
export function saving(before: number, after: number): number {
  if (before === after) return 0;
  const s = before - after;
  return Number.isNaN(s) ? 0 : s;
}
