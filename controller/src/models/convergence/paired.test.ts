import { describe, expect, it } from 'vitest';
import { comparePaired, signTestP } from './paired';

describe('signTestP', () => {
  it.each([
    // Exact two-sided binomial(n, ½) tails, computed by hand.
    [9, 1, 22 / 1024],
    [1, 9, 22 / 1024],
    [5, 5, 1],
    [0, 0, 1],
    [10, 0, 2 / 1024],
    [27, 5, 2 * ((1 + 32 + 496 + 4960 + 35960 + 201376) / 2 ** 32)],
  ])('%i against %i → %f', (wins, losses, p) => {
    expect(signTestP(wins, losses)).toBeCloseTo(p, 10);
  });

  it('stays a probability where 0.5^n underflows (normal approximation)', () => {
    expect(signTestP(600, 600)).toBeGreaterThan(0.9);
    expect(signTestP(700, 500)).toBeLessThan(1e-6);
    // z = (500.5 − 530) / √265 = −1.81 (continuity-corrected): two-sided 0.070.
    expect(signTestP(560, 500)).toBeCloseTo(0.07, 3);
  });
});

describe('comparePaired', () => {
  it('counts ties as ties, however many: equal medians say nothing', () => {
    const pairs = Array.from({ length: 40 }, () => [0.05, 0.05] as const);
    expect(comparePaired(pairs)).toEqual({
      oursCloser: 0,
      ties: 40,
      paperCloser: 0,
      p: 1,
      verdict: 'no difference',
    });
  });

  it('calls a difference only when the sign test says so', () => {
    const better = [...Array.from({ length: 9 }, () => [0.01, 0.05] as const), [0.05, 0.01] as const];
    expect(comparePaired(better)).toMatchObject({ oursCloser: 9, paperCloser: 1, verdict: 'better' });
    const worse = better.map(([a, b]) => [b, a] as const);
    expect(comparePaired(worse).verdict).toBe('worse');
    const few = [[0.01, 0.05] as const, [0.01, 0.05] as const, [0.05, 0.01] as const];
    expect(comparePaired(few).verdict).toBe('no difference');
  });
});
