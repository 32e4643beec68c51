/**
 * Pre-processing of (step, loss) points before the fit (paper §3.1): cleaning, outlier replacement,
 * normalisation and down-sampling of long histories.
 */
import type { LossPoint } from './types';

/** Keeps finite points with step ≥ 0 and loss > 0 (Eq. 1 cannot describe a non-positive loss), sorted by step. */
export function cleanPoints(points: readonly LossPoint[]): LossPoint[] {
  const kept = points.filter(
    (p) => Number.isFinite(p.step) && Number.isFinite(p.loss) && p.step >= 0 && p.loss > 0,
  );
  // Histories usually arrive in order: checking is one cheap pass, sorting calls a comparator per step.
  for (let i = 1; i < kept.length; i++)
    if ((kept[i - 1] as LossPoint).step > (kept[i] as LossPoint).step)
      return kept.sort((a, b) => a.step - b.step);
  return kept;
}

/**
 * Per-epoch extremes of the epochs that have points. Sparse on purpose: the memory is the number of
 * points, never the epoch number a point claims (one record saying "epoch 1,000,000" must not cost
 * a million-entry array).
 */
function epochExtremes(
  points: readonly LossPoint[],
  stepsPerEpoch: number,
): Map<number, { min: number; max: number }> {
  const out = new Map<number, { min: number; max: number }>();
  for (const p of points) {
    const e = Math.floor(p.step / stepsPerEpoch);
    const x = out.get(e);
    if (x === undefined) out.set(e, { min: p.loss, max: p.loss });
    else {
      x.min = Math.min(x.min, p.loss);
      x.max = Math.max(x.max, p.loss);
    }
  }
  return out;
}

/**
 * The paper's outlier rule: a point of epoch e outside [min loss of epochs e+1..e+w, max loss of epochs
 * e−w..e−1] is replaced by the mean of its neighbours (w = 5). A bound without any epoch behind it is not
 * applied, so the first and the latest epochs are only checked on one side. Points must be cleaned (sorted).
 * A learning-rate drop passes untouched: later losses are lower, earlier ones higher.
 */
export function replaceOutliers(
  points: readonly LossPoint[],
  stepsPerEpoch: number,
  windowEpochs = 5,
): LossPoint[] {
  const extremes = epochExtremes(points, stepsPerEpoch);
  return points.map((p, i) => {
    const e = Math.floor(p.step / stepsPerEpoch);
    let upper = -Infinity;
    let lower = Infinity;
    for (let d = 1; d <= windowEpochs; d++) {
      const before = extremes.get(e - d);
      if (before !== undefined) upper = Math.max(upper, before.max);
      const after = extremes.get(e + d);
      if (after !== undefined) lower = Math.min(lower, after.min);
    }
    const tooHigh = upper > -Infinity && p.loss > upper;
    const tooLow = lower < Infinity && p.loss < lower;
    if (!tooHigh && !tooLow) return p;
    const before = points[i - 1];
    const after = points[i + 1];
    const neighbours = [before, after].filter((q): q is LossPoint => q !== undefined);
    if (neighbours.length === 0) return p;
    const loss = neighbours.reduce((s, q) => s + q.loss, 0) / neighbours.length;
    return { step: p.step, loss };
  });
}

/** Divides every loss by the largest one, so values lie in (0, 1]; returns the scale to undo it. */
export function normalise(points: readonly LossPoint[]): { points: LossPoint[]; scale: number } {
  const scale = points.reduce((m, p) => Math.max(m, p.loss), 0);
  if (!(scale > 0)) return { points: [...points], scale: 1 };
  return { points: points.map((p) => ({ step: p.step, loss: p.loss / scale })), scale };
}

/**
 * Averages every `ceil(n / maxPoints)` consecutive points (the paper's "sample every few steps or average
 * the points of an epoch"), keeping the fit's cost bounded for long jobs. Equal-size bins (only the last may
 * be smaller) keep the spacing even, which the drop detector relies on.
 */
export function downsample(points: readonly LossPoint[], maxPoints: number): LossPoint[] {
  if (points.length <= maxPoints) return [...points];
  const size = Math.ceil(points.length / maxPoints);
  const out: LossPoint[] = [];
  for (let from = 0; from < points.length; from += size) {
    const to = Math.min(points.length, from + size);
    let step = 0;
    let loss = 0;
    for (let i = from; i < to; i++) {
      const p = points[i] as LossPoint;
      step += p.step;
      loss += p.loss;
    }
    out.push({ step: step / (to - from), loss: loss / (to - from) });
  }
  return out;
}

/**
 * Mean loss of every epoch 0..last (an epoch's loss is the mean of its points). An epoch without points takes
 * the previous epoch's mean (the first known one for leading gaps), so the sequence has no holes.
 */
export function epochMeans(points: readonly LossPoint[], stepsPerEpoch: number): number[] {
  const series = epochMeanSeries(points, stepsPerEpoch);
  return Array.from({ length: series.epochs }, (_, e) => series.at(e));
}

/** {@link epochMeans} as a function of the epoch, in memory proportional to the points (not the epochs). */
export interface EpochSeries {
  /** Epochs 0..last. */
  readonly epochs: number;
  at(epoch: number): number;
}

export function epochMeanSeries(points: readonly LossPoint[], stepsPerEpoch: number): EpochSeries {
  // Points are sorted by step, so epochs arrive in order: one pass builds the sparse series.
  const epochs: number[] = [];
  const means: number[] = [];
  let sum = 0;
  let count = 0;
  for (const p of points) {
    const e = Math.floor(p.step / stepsPerEpoch);
    if (epochs.length > 0 && epochs[epochs.length - 1] === e) {
      sum += p.loss;
      count += 1;
      continue;
    }
    if (count > 0) means.push(sum / count);
    epochs.push(e);
    [sum, count] = [p.loss, 1];
  }
  if (count > 0) means.push(sum / count);
  const last = epochs[epochs.length - 1];
  return {
    epochs: last === undefined ? 0 : last + 1,
    at: (e) => {
      // The last epoch with points at or before `e`, else the first one (a leading gap).
      let lo = 0;
      let hi = epochs.length - 1;
      if (hi < 0) return NaN;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if ((epochs[mid] as number) <= e) lo = mid;
        else hi = mid - 1;
      }
      return means[lo] as number;
    },
  };
}
