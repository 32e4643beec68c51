import { describe, expect, it } from 'vitest';
import { estimateConvergence } from './estimate';
import { eq1Curve, observe, seededRandom, trueTotalSteps } from './synthetic';
import type { Scenario } from './synthetic';

const SPE = 100;
const rule = { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 };
const curve = eq1Curve({ b0: 0.21, b1: 1.07, b2: 0.07 }, SPE);
const truth = trueTotalSteps(curve, rule) ?? NaN;
const scenario = (relative: number): Scenario => ({
  name: 'interval',
  paperForm: true,
  curve,
  rule,
  pointsPerEpoch: 10,
  noise: { relative, autocorrelation: 0.3, outlierRate: 0 },
});

/** Median interval width (steps) over a few noisy copies observed up to `progress` of the truth. */
function medianWidth(relative: number, progress: number): number {
  const widths: number[] = [];
  for (let seed = 1; seed <= 9; seed++) {
    const est = estimateConvergence(observe(scenario(relative), progress * truth, seededRandom(seed)), rule);
    if (est.status === 'ok') widths.push(est.upper - est.lower);
  }
  widths.sort((a, b) => a - b);
  return widths[widths.length >> 1] ?? NaN;
}

describe('prediction interval', () => {
  it('is tight on noiseless data: the point ± the epoch grid', () => {
    const points = Array.from({ length: 100 }, (_, i) => ({ step: i * 10 + 5, loss: curve(i * 10 + 5) }));
    const est = estimateConvergence(points, rule);
    if (est.status !== 'ok') throw new Error(est.reason);
    expect(est.predictedTotalSteps).toBe(truth);
    expect(est.upper - est.lower).toBeLessThanOrEqual(3 * SPE);
  });

  it('widens with noise', () => {
    expect(medianWidth(0.08, 0.5)).toBeGreaterThan(medianWidth(0.01, 0.5));
  });

  it('narrows as points accumulate', () => {
    expect(medianWidth(0.03, 0.75)).toBeLessThan(medianWidth(0.03, 0.25));
  });

  it('never starts before the epochs already done', () => {
    const points = observe(scenario(0.05), 0.75 * truth, seededRandom(3));
    const est = estimateConvergence(points, rule);
    if (est.status !== 'ok') throw new Error(est.reason);
    expect(est.lower).toBeGreaterThanOrEqual(
      Math.min(est.predictedTotalSteps, Math.floor((0.75 * truth) / SPE) * SPE),
    );
  });
});
