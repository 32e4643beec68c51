import { fcnnlsVector } from 'ml-fcnnls';
import { describe, expect, it } from 'vitest';
import { nnls2Sse, solveNnls2 } from './nnls2';
import { seededRandom } from './synthetic';

/** Sufficient statistics of min Σ (y − a·g − c·h)² from explicit columns (unit weights). */
function sums(g: number[], h: number[], y: number[]) {
  const dot = (u: number[], v: number[]) => u.reduce((s, ui, i) => s + ui * (v[i] ?? 0), 0);
  return { gg: dot(g, g), gh: dot(g, h), hh: dot(h, h), gy: dot(g, y), hy: dot(h, y), yy: dot(y, y) };
}

describe('solveNnls2', () => {
  it.each([
    ['interior optimum', [1, 2, 3, 4], [1, 1, 1, 1], [3, 5, 7, 9], { a: 2, c: 1 }],
    ['c clamped at 0 (a = Σgy/Σgg)', [1, 2, 3, 4], [1, 1, 1, 1], [1, 3, 5, 7], { a: 50 / 30, c: 0 }],
    ['a clamped at 0', [1, 2, 3, 4], [1, 1, 1, 1], [5, 4, 3, 2], { a: 0, c: 3.5 }],
    ['both zero', [1, 2, 3, 4], [1, 1, 1, 1], [-1, -2, -3, -4], { a: 0, c: 0 }],
  ])('%s', (_name, g, h, y, expected) => {
    const s = solveNnls2(sums(g, h, y));
    expect(s.a).toBeCloseTo(expected.a, 9);
    expect(s.c).toBeCloseTo(expected.c, 9);
  });

  it('agrees with ml-fcnnls on random problems', () => {
    const random = seededRandom(42);
    for (let trial = 0; trial < 50; trial++) {
      const g = Array.from({ length: 12 }, () => random());
      const h = Array.from({ length: 12 }, () => random());
      const y = Array.from({ length: 12 }, () => 2 * random() - 0.7);
      const ours = solveNnls2(sums(g, h, y));
      const K = fcnnlsVector(
        g.map((gi, i) => [gi, h[i] ?? 0]),
        y,
      ).K.to1DArray();
      expect(ours.a).toBeCloseTo(K[0] ?? NaN, 6);
      expect(ours.c).toBeCloseTo(K[1] ?? NaN, 6);
    }
  });
});

describe('nnls2Sse (the allocation-free SSE of the 1-D searches)', () => {
  it('equals solveNnls2(...).sse bit for bit, interior and boundary optima alike', () => {
    const random = seededRandom(5);
    for (let k = 0; k < 500; k++) {
      const n = 3 + Math.floor(random() * 20);
      const totals = { gg: 0, gh: 0, hh: 0, gy: 0, hy: 0, yy: 0 };
      for (let i = 0; i < n; i++) {
        const w = random();
        const g = random();
        const y = random() * 2 - (k % 3 === 0 ? 1 : 0);
        totals.gg += w * g * g;
        totals.gh += w * g;
        totals.hh += w;
        totals.gy += w * g * y;
        totals.hy += w * y;
        totals.yy += w * y * y;
      }
      const { gg, gh, hh, gy, hy, yy } = totals;
      expect(nnls2Sse(gg, gh, hh, gy, hy, yy)).toBe(solveNnls2(totals).sse);
    }
  });
});
