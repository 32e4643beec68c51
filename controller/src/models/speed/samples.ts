/** Validation of speed samples shared by every fit (bad input gets a clear error, never a NaN model). */
import type { SpeedSample } from './types';

/** Throws a RangeError naming the first invalid sample; returns the samples otherwise. */
export function checkSamples(samples: readonly SpeedSample[]): readonly SpeedSample[] {
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as SpeedSample;
    const fine =
      Number.isInteger(s.ps) &&
      s.ps >= 1 &&
      Number.isInteger(s.workers) &&
      s.workers >= 1 &&
      s.stepsPerSec > 0 &&
      s.stepsPerSec < Infinity &&
      (s.weight === undefined || (s.weight > 0 && s.weight < Infinity));
    if (!fine) throw new RangeError(`speed sample #${i}: ${problemOf(s)}`);
  }
  return samples;
}

/** The message for an invalid sample (kept off the hot path). */
function problemOf(s: SpeedSample): string {
  if (!Number.isInteger(s.ps) || s.ps < 1) return `ps must be a positive integer, got ${s.ps}`;
  if (!Number.isInteger(s.workers) || s.workers < 1)
    return `workers must be a positive integer, got ${s.workers}`;
  if (!(s.stepsPerSec > 0 && s.stepsPerSec < Infinity))
    return `stepsPerSec must be a positive number, got ${s.stepsPerSec}`;
  return `weight must be a positive number, got ${String(s.weight)}`;
}

/** Checks a shape passed to `predict`. */
export function checkShape(ps: number, workers: number): void {
  if (!(ps >= 1 && workers >= 1 && Number.isFinite(ps) && Number.isFinite(workers))) {
    throw new RangeError(`speed model: a shape needs ps ≥ 1 and workers ≥ 1, got (${ps}, ${workers})`);
  }
}

/** Median of a non-empty list (copy-sorted). */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Linear-interpolated quantile q ∈ [0, 1] of a non-empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  return a + ((sorted[hi] as number) - a) * (pos - lo);
}
