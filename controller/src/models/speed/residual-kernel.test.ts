import { describe, expect, it } from 'vitest';
import { DEFAULT_RESIDUAL_KERNEL, residualCorrection, type ResidualPoint } from './residual-kernel';

const point = (ps: number, workers: number, residual: number, weight = 1): ResidualPoint => ({
  lnPs: Math.log(ps),
  lnWorkers: Math.log(workers),
  residual,
  weight,
});

describe('residualCorrection', () => {
  it.each([
    { name: 'no points: no correction', points: [], at: [4, 4], expected: 0 },
    {
      name: 'one point at the shape: shrunk by the pseudo-count',
      points: [point(4, 4, 0.3)],
      at: [4, 4],
      expected: 0.3 / 1.5,
    },
    {
      name: 'two points at the shape: closer to their mean',
      points: [point(4, 4, 0.3), point(4, 4, 0.1)],
      at: [4, 4],
      expected: 0.4 / 2.5,
    },
    { name: 'a far point barely counts', points: [point(1, 1, 0.5)], at: [20, 20], expected: 0 },
    {
      name: 'a dropped point (weight 0) does not count',
      points: [point(4, 4, 0.3, 0)],
      at: [4, 4],
      expected: 0,
    },
  ])('$name', ({ points, at, expected }) => {
    expect(residualCorrection(points, at[0]!, at[1]!)).toBeCloseTo(expected, 6);
  });

  it('shares a residual more with the same PS count than with a different one', () => {
    const points = [point(6, 4, 0.2)];
    const samePs = residualCorrection(points, 6, 8, DEFAULT_RESIDUAL_KERNEL);
    const otherPs = residualCorrection(points, 12, 4, DEFAULT_RESIDUAL_KERNEL);
    expect(samePs).toBeGreaterThan(otherPs);
    expect(otherPs).toBeGreaterThan(0);
  });
});
