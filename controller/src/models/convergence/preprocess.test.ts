import { describe, expect, it } from 'vitest';
import {
  cleanPoints,
  downsample,
  epochMeans,
  epochMeanSeries,
  normalise,
  replaceOutliers,
} from './preprocess';
import type { LossPoint } from './types';

/** Builder: one point per `spacing` steps with the given losses. */
const pts = (losses: number[], spacing = 10): LossPoint[] =>
  losses.map((loss, i) => ({ step: i * spacing, loss }));

describe('cleanPoints', () => {
  it('drops non-finite, negative-step and non-positive losses, and sorts by step', () => {
    const cleaned = cleanPoints([
      { step: 20, loss: 1 },
      { step: 10, loss: 2 },
      { step: -1, loss: 1 },
      { step: 30, loss: NaN },
      { step: 40, loss: 0 },
      { step: Infinity, loss: 1 },
    ]);
    expect(cleaned).toEqual([
      { step: 10, loss: 2 },
      { step: 20, loss: 1 },
    ]);
  });
});

describe('replaceOutliers (paper: outside [min of next 5 epochs, max of previous 5 epochs])', () => {
  // One point per epoch (stepsPerEpoch = 10).
  it.each([
    ['an upward spike is replaced by the mean of its neighbours', [1, 0.9, 0.8, 3, 0.7, 0.65, 0.6], 3, 0.75],
    ['a downward dip is replaced', [1, 0.9, 0.8, 0.1, 0.7, 0.65, 0.6], 3, 0.75],
    ['a regular point is kept', [1, 0.9, 0.8, 0.75, 0.7, 0.65, 0.6], 3, 0.75],
    ['the first epoch has no upper bound', [5, 0.9, 0.8, 0.75, 0.7], 0, 5],
    ['a learning-rate drop is kept', [1, 0.9, 0.85, 0.4, 0.38, 0.36, 0.35], 3, 0.4],
  ])('%s', (_name, losses, index, expected) => {
    const out = replaceOutliers(pts(losses), 10);
    expect(out[index]?.loss).toBeCloseTo(expected, 12);
    expect(out).toHaveLength(losses.length);
  });
});

describe('normalise', () => {
  it('divides by the largest loss and returns the scale', () => {
    const { points, scale } = normalise(pts([4, 8, 2]));
    expect(scale).toBe(8);
    expect(points.map((p) => p.loss)).toEqual([0.5, 1, 0.25]);
  });
});

describe('downsample', () => {
  it('keeps short histories as they are', () => {
    expect(downsample(pts([3, 2, 1]), 5)).toHaveLength(3);
  });
  it('averages equal-size bins of consecutive points', () => {
    const out = downsample(pts([6, 4, 3, 1, 1]), 3);
    expect(out).toEqual([
      { step: 5, loss: 5 },
      { step: 25, loss: 2 },
      { step: 40, loss: 1 },
    ]);
  });
});

describe('epochMeans', () => {
  it('averages the points of each epoch and fills empty epochs with the previous mean', () => {
    const points: LossPoint[] = [
      { step: 0, loss: 4 },
      { step: 5, loss: 2 },
      { step: 25, loss: 1 },
    ];
    expect(epochMeans(points, 10)).toEqual([3, 3, 1]);
  });
});

describe('sparse epochs', () => {
  it('costs memory by points, not by the epoch a point claims: epoch 10^12 is one more entry', () => {
    const pts = [
      { step: 0, loss: 1 },
      { step: 150, loss: 0.8 },
      { step: 1e12 * 100, loss: 0.5 },
    ];
    expect(() => replaceOutliers(pts, 100)).not.toThrow();
    const series = epochMeanSeries(pts, 100);
    expect(series.epochs).toBe(1e12 + 1);
    expect([series.at(0), series.at(1), series.at(5e11), series.at(1e12)]).toEqual([1, 0.8, 0.8, 0.5]);
  });

  it('matches the dense epoch means', () => {
    const pts = [
      { step: 250, loss: 2 },
      { step: 260, loss: 4 },
      { step: 700, loss: 1 },
    ];
    const series = epochMeanSeries(pts, 100);
    expect(Array.from({ length: series.epochs }, (_, e) => series.at(e))).toEqual(epochMeans(pts, 100));
    expect(epochMeans(pts, 100)).toEqual([3, 3, 3, 3, 3, 3, 3, 1]);
  });
});
