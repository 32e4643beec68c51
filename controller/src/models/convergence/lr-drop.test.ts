import { describe, expect, it } from 'vitest';
import { detectLastDrop } from './lr-drop';
import { eq1Curve, observe, seededRandom, withLrDrop } from './synthetic';
import type { Scenario } from './synthetic';

const SPE = 100;
const noisy = (curve: Scenario['curve'], relative = 0.03): Scenario => ({
  name: 'test',
  paperForm: false,
  curve,
  rule: { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 },
  pointsPerEpoch: 5,
  noise: { relative, autocorrelation: 0.3, outlierRate: 0 },
});
const base = eq1Curve({ b0: 0.21, b1: 1.07, b2: 0.07 }, SPE);

describe('detectLastDrop', () => {
  it.each([
    ['a 40% step at epoch 8', 8, 0.6],
    ['a 25% step at epoch 12', 12, 0.75],
  ])('finds %s at the first point after it (≥ 9 of 10 noisy copies)', (_name, atEpoch, factor) => {
    const curve = withLrDrop(base, { atEpoch, factor, b0: 0.5, floorShare: 0.3 }, SPE);
    let found = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const points = observe(noisy(curve), 20 * SPE, seededRandom(seed));
      const index = detectLastDrop(points);
      if (index === null) continue;
      found++;
      expect(points[index]?.step).toBe(atEpoch * SPE + 10); // first observation after the drop
    }
    expect(found).toBeGreaterThanOrEqual(9);
  });

  it('finds the last of two drops', () => {
    const once = withLrDrop(base, { atEpoch: 6, factor: 0.6, b0: 0.5, floorShare: 0.3 }, SPE);
    const twice = withLrDrop(once, { atEpoch: 14, factor: 0.6, b0: 0.5, floorShare: 0.3 }, SPE);
    const points = observe(noisy(twice), 20 * SPE, seededRandom(3));
    expect(points[detectLastDrop(points) ?? 0]?.step).toBe(14 * SPE + 10);
  });

  it.each([
    ['realistic noise', 0.03, 0],
    ['heavy noise', 0.08, 2],
  ])('raises (almost) no false alarm on smooth curves with %s', (_name, relative, tolerated) => {
    let alarms = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const points = observe(noisy(base, relative), 20 * SPE, seededRandom(seed));
      if (detectLastDrop(points) !== null) alarms++;
    }
    expect(alarms).toBeLessThanOrEqual(tolerated);
  });

  it('ignores a single low point', () => {
    const points = observe(noisy(base, 0.01), 10 * SPE, seededRandom(1));
    const dipped = points.map((p, i) => (i === 25 ? { step: p.step, loss: p.loss * 0.3 } : p));
    expect(detectLastDrop(dipped)).toBeNull();
  });
});
