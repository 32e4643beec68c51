import { describe, expect, it } from 'vitest';
import { convergedEpochOf } from './rule';
import { eq1Curve, observe, seededRandom, trueEpochMeans, trueTotalSteps, withLrDrop } from './synthetic';
import type { Scenario } from './synthetic';

describe('synthetic curves', () => {
  it('the seeded PRNG is deterministic and uniform-looking', () => {
    const a = seededRandom(5);
    const b = seededRandom(5);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(xs.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b()));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
  });

  it('ground truth is the rule applied to the noiseless epoch means', () => {
    const rule = { stepsPerEpoch: 100, threshold: 0.01, patience: 3 };
    const curve = eq1Curve({ b0: 0.21, b1: 1.07, b2: 0.07 }, 100);
    const e = convergedEpochOf(trueEpochMeans(curve, 100, 200), 0.01, 3);
    expect(trueTotalSteps(curve, rule)).toBe(((e ?? NaN) + 1) * 100);
    // By hand: per-epoch decrease ≈ 0.21/(0.21·e + 1.07)² < 0.01 from e ≈ 17, three epochs in a row → 20.
    expect(e).toBe(20);
  });

  it('a learning-rate drop steps the curve down by the factor', () => {
    const curve = withLrDrop(
      eq1Curve({ b0: 0.21, b1: 1.07, b2: 0.07 }, 100),
      {
        atEpoch: 5,
        factor: 0.6,
        b0: 0.5,
        floorShare: 0.3,
      },
      100,
    );
    expect(curve(500) / curve(499.999)).toBeCloseTo(0.6, 4);
  });

  it('observations are evenly spaced, stop before untilStep, and repeat for a seed', () => {
    const scenario: Scenario = {
      name: 't',
      paperForm: true,
      curve: () => 1,
      rule: { stepsPerEpoch: 100, threshold: 0.01, patience: 3 },
      pointsPerEpoch: 4,
      noise: { relative: 0.05, autocorrelation: 0.5, outlierRate: 0 },
    };
    const points = observe(scenario, 300, seededRandom(1));
    expect(points.map((p) => p.step)).toEqual([12, 37, 62, 87, 112, 137, 162, 187, 212, 237, 262, 287]);
    expect(observe(scenario, 300, seededRandom(1))).toEqual(points);
  });
});
