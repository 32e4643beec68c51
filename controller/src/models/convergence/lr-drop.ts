/**
 * Learning-rate drop detection: a sudden step down in the loss, much larger than both the noise and the
 * decrease the curve was making just before. Eq. 1 cannot describe such a step, so the estimator refits on
 * the points after the last drop (the paper suggests treating the rest as a new job).
 */
import { ScratchArena } from '../scratch-arena';
import type { LossPoint } from './types';

export interface DropOptions {
  /** Points per comparison window (medians of `window` points are compared). */
  readonly window?: number;
  /** Smallest step that counts, relative to the loss level before it. */
  readonly minRelativeDrop?: number;
  /**
   * The step must stand out of the series' own distribution of window-to-window changes by this many robust
   * standard deviations (self-calibrating to the noise level and its autocorrelation).
   */
  readonly noiseFactor?: number;
  /** The step must exceed this many times the decrease over the preceding window. */
  readonly trendFactor?: number;
}

/**
 * Window statistics of one scan (views of one buffer: small typed arrays cost ~1 µs each off the V8 heap).
 * Reset by every `scanDrops`, which is synchronous and keeps none of it.
 */
const arena = new ScratchArena(1024);

function median(values: Float64Array): number {
  values.sort();
  const mid = values.length >> 1;
  return values.length % 2 === 1
    ? (values[mid] ?? NaN)
    : ((values[mid - 1] ?? NaN) + (values[mid] ?? NaN)) / 2;
}

/** Median, min and max of every window y[i..i+m), computed once (the detector compares shifted windows). */
function windowStats(
  y: readonly number[],
  m: number,
): { med: Float64Array; min: Float64Array; max: Float64Array } {
  const count = Math.max(0, y.length - m + 1);
  const med = arena.take(count);
  const min = arena.take(count);
  const max = arena.take(count);
  const scratch = new Float64Array(m);
  for (let i = 0; i < count; i++) {
    // Insertion sort: the windows are tiny (4 points), where a library sort call costs more than the sorting.
    for (let j = 0; j < m; j++) {
      const v = y[i + j] ?? 0;
      let k = j;
      for (; k > 0 && (scratch[k - 1] as number) > v; k--) scratch[k] = scratch[k - 1] as number;
      scratch[k] = v;
    }
    const mid = m >> 1;
    med[i] = m % 2 === 1 ? (scratch[mid] ?? 0) : ((scratch[mid - 1] ?? 0) + (scratch[mid] ?? 0)) / 2;
    min[i] = scratch[0] ?? 0;
    max[i] = scratch[m - 1] ?? 0;
  }
  return { med, min, max };
}

interface DropScan {
  readonly index: number;
  /** False when fewer than 2·window points follow it: it looks like a drop but is not confirmed yet. */
  readonly confirmed: boolean;
}

/** Builds the test "is there a drop right before point i?" for a series (null when it is too short). */
function dropTest(
  y: readonly number[],
  options: DropOptions,
): ((i: number, confirm: boolean) => boolean) | null {
  const m = options.window ?? 4;
  const minRelativeDrop = options.minRelativeDrop ?? 0.15;
  const noiseFactor = options.noiseFactor ?? 4;
  const trendFactor = options.trendFactor ?? 3;
  if (y.length < 4 * m) return null;
  const w = windowStats(y, m);
  // Noise of the window-to-window decrease, from the series itself: the spread of its changes between
  // consecutive windows (which cancels the local trend), whatever the noise's level and autocorrelation.
  const count = w.med.length - 2 * m;
  if (count < 3) return null;
  const wiggle = arena.take(count);
  for (let i = 2 * m; i < w.med.length; i++) {
    wiggle[i - 2 * m] = (w.med[i - 2 * m] ?? 0) - 2 * (w.med[i - m] ?? 0) + (w.med[i] ?? 0);
  }
  for (let i = 0; i < count; i++) wiggle[i] = Math.abs(wiggle[i] as number);
  const spread = (1.4826 * median(wiggle)) / Math.SQRT2;
  return (i, confirm) => {
    // Decrease per window over the two windows before: steadier than one window under correlated noise.
    const prior = w.med[i - 3 * m] ?? 0;
    const before = w.med[i - m] ?? 0;
    const size = before - (w.med[i] ?? 0);
    const trend = Math.max((prior - before) / 2, 0);
    // Every point of the window(s) after must lie below every point before: noise rarely does that.
    const after = confirm ? Math.max(w.max[i] ?? 0, w.max[i + m] ?? 0) : (w.max[i] ?? 0);
    return (
      after < (w.min[i - m] ?? 0) &&
      size > minRelativeDrop * before &&
      size - trend > noiseFactor * spread &&
      size > trendFactor * trend
    );
  };
}

/**
 * Scans for the last drop. A drop is confirmed once two windows of points follow it; a candidate with only
 * one window after it is reported unconfirmed (the estimator then waits rather than fit across it).
 */
export function scanDrops(points: readonly LossPoint[], options: DropOptions = {}): DropScan | null {
  const m = options.window ?? 4;
  const y = points.map((p) => p.loss);
  arena.reset();
  const isDrop = dropTest(y, options);
  if (isDrop === null) return null;
  let found: DropScan | null = null;
  let run: (DropScan & { jump: number }) | null = null;
  for (let i = 3 * m; i + m <= y.length; i++) {
    const confirmed = i + 2 * m <= y.length;
    if (!isDrop(i, confirmed)) {
      if (run !== null) found = { index: run.index, confirmed: run.confirmed };
      run = null;
      continue;
    }
    // Neighbouring candidates belong to the same drop: the drop itself is where the single-point jump is
    // largest (medians cannot place it: they tolerate one point on the wrong side).
    const jump = (y[i - 1] ?? 0) - (y[i] ?? 0);
    const runConfirmed: boolean = run !== null && run.confirmed;
    if (run === null || jump > run.jump) run = { index: i, confirmed: runConfirmed || confirmed, jump };
  }
  return run === null ? found : { index: run.index, confirmed: run.confirmed };
}

/**
 * Index of the first point after the LAST confirmed learning-rate drop, or null when there is none.
 * Points must be sorted by step and roughly evenly spaced (the estimator passes down-sampled points).
 */
export function detectLastDrop(points: readonly LossPoint[], options: DropOptions = {}): number | null {
  let scan = scanDrops(points, options);
  if (scan !== null && !scan.confirmed) {
    // An unconfirmed candidate at the end must not hide a confirmed drop before it.
    scan = scanDrops(points.slice(0, Math.max(0, scan.index - 1)), options);
  }
  return scan?.confirmed === true ? scan.index : null;
}

/**
 * Index of a drop-like step among the latest points that is not confirmed yet (too few points after it),
 * or null. The estimator answers "insufficient data" meanwhile rather than fit across a likely drop.
 */
export function detectPendingDrop(points: readonly LossPoint[], options: DropOptions = {}): number | null {
  const scan = scanDrops(points, options);
  return scan !== null && !scan.confirmed ? scan.index : null;
}
