import { describe, expect, it } from 'vitest';
import { brentMinimise } from './brent';
import { goldenSearch } from './fit';

describe('brentMinimise', () => {
  const cases = [
    { name: 'parabola', f: (t: number) => (t - 0.3) ** 2, lo: -2, hi: 3, min: 0.3 },
    { name: 'asymmetric smooth', f: (t: number) => Math.exp(t) - 2 * t, lo: -3, hi: 4, min: Math.log(2) },
    { name: 'quartic (flat bottom)', f: (t: number) => (t - 1) ** 4 + 0.1, lo: -1, hi: 2, min: 1 },
    { name: 'minimum at the lower end', f: (t: number) => t, lo: 0, hi: 1, min: 0 },
    { name: 'minimum at the upper end', f: (t: number) => -t, lo: 0, hi: 1, min: 1 },
    { name: 'profile-like (1/(r·x+1) fit)', f: profileLike, lo: -9, hi: 2, min: Math.log(0.05) },
  ];
  it.each(cases)('$name: finds the minimum the golden search finds, in fewer evaluations', (c) => {
    let brentCalls = 0;
    let goldenCalls = 0;
    const brent = brentMinimise((t) => (brentCalls++, c.f(t)), c.lo, c.hi, 1e-5 * (c.hi - c.lo));
    const golden = goldenSearch((t) => (goldenCalls++, c.f(t)), c.lo, c.hi, 30);
    const slack = c.name.startsWith('quartic') ? 2e-2 : 1e-3;
    expect(Math.abs(brent.x - c.min)).toBeLessThan(slack);
    // Within the tolerance asked (1e-5 of the range), not to the last digit golden section reaches.
    expect(brent.value).toBeLessThanOrEqual(golden.value + 1e-4);
    expect(brentCalls).toBeLessThan(goldenCalls);
  });
});

/** SSE of a least-squares fit of a·g + c to data from r = 0.05, as a function of log r. */
function profileLike(logR: number): number {
  const r = Math.exp(logR);
  let sse = 0;
  for (let x = 0; x < 50; x++) {
    const truth = 1 / (0.05 * x + 1);
    const model = 1 / (r * x + 1);
    sse += (truth - model) ** 2;
  }
  return sse;
}
