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

/** Per-epoch extremes, indexed by epoch number; epochs without points hold ±Infinity. */
function epochExtremes(
  points: readonly LossPoint[],
  stepsPerEpoch: number,
): { min: number[]; max: number[] } {
  const last = points[points.length - 1];
  const epochs = last === undefined ? 0 : Math.floor(last.step / stepsPerEpoch) + 1;
  const min = new Array<number>(epochs).fill(Infinity);
  const max = new Array<number>(epochs).fill(-Infinity);
  for (const p of points) {
    const e = Math.floor(p.step / stepsPerEpoch);
    min[e] = Math.min(min[e] ?? Infinity, p.loss);
    max[e] = Math.max(max[e] ?? -Infinity, p.loss);
  }
  return { min, max };
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
  const { min, max } = epochExtremes(points, stepsPerEpoch);
  const epochs = max.length;
  return points.map((p, i) => {
    const e = Math.floor(p.step / stepsPerEpoch);
    let upper = -Infinity;
    let lower = Infinity;
    // Loops stay inside the arrays: an out-of-range read (−1) is a slow property lookup in V8.
    for (let d = 1; d <= Math.min(windowEpochs, e); d++) upper = Math.max(upper, max[e - d] as number);
    for (let d = 1; d <= Math.min(windowEpochs, epochs - 1 - e); d++)
      lower = Math.min(lower, min[e + d] as number);
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
  const last = points[points.length - 1];
  if (last === undefined) return [];
  const epochs = Math.floor(last.step / stepsPerEpoch) + 1;
  const sum = new Array<number>(epochs).fill(0);
  const count = new Array<number>(epochs).fill(0);
  for (const p of points) {
    const e = Math.floor(p.step / stepsPerEpoch);
    sum[e] = (sum[e] ?? 0) + p.loss;
    count[e] = (count[e] ?? 0) + 1;
  }
  const firstKnown = count.findIndex((c) => c > 0);
  const means: number[] = [];
  let carry = (sum[firstKnown] ?? 0) / (count[firstKnown] ?? 1);
  for (let e = 0; e < epochs; e++) {
    const c = count[e] ?? 0;
    if (c > 0) carry = (sum[e] ?? 0) / c;
    means.push(carry);
  }
  return means;
}
