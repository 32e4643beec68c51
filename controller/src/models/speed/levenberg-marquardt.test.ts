import { describe, expect, it } from 'vitest';
import { levenbergMarquardt, solveLinear } from './levenberg-marquardt';

describe('levenbergMarquardt', () => {
  it('fits an exponential decay from a far start', () => {
    const xs = [0, 1, 2, 3, 4, 5, 6];
    const ys = xs.map((x) => 3 * Math.exp(-0.7 * x) + 0.5);
    const fit = levenbergMarquardt(
      (p, out) =>
        xs.forEach(
          (x, i) => (out[i] = (p[0] as number) * Math.exp(-(p[1] as number) * x) + (p[2] as number) - ys[i]!),
        ),
      [1, 0.1, 0],
      xs.length,
    );
    expect(fit.x[0]).toBeCloseTo(3, 4);
    expect(fit.x[1]).toBeCloseTo(0.7, 4);
    expect(fit.x[2]).toBeCloseTo(0.5, 4);
    expect(fit.cost).toBeLessThan(1e-12);
  });

  it('minimises (not solves) an inconsistent system: the least-squares point', () => {
    const fit = levenbergMarquardt(
      (p, out) => ((out[0] = (p[0] as number) - 1), (out[1] = (p[0] as number) - 3)),
      [10],
      2,
    );
    expect(fit.x[0]).toBeCloseTo(2, 6);
  });
});

describe('solveLinear', () => {
  it('solves with pivoting and reports a singular system', () => {
    const b = Float64Array.from([5, 6]);
    expect(solveLinear(Float64Array.from([0, 1, 2, 0]), b, 2)).toBe(true);
    expect(Array.from(b)).toEqual([3, 5]);
    expect(solveLinear(Float64Array.from([1, 2, 2, 4]), Float64Array.from([1, 1]), 2)).toBe(false);
  });
});
