import { describe, expect, it } from 'vitest';
import type { Beta } from './curve';
import { lossCurve } from './curve';
import { fitEq1 } from './fit';
import { fitEq1Paper } from './fit-paper';

/** Noiseless data of Eq. 1 at n evenly spaced steps up to `span`. */
function noiseless(beta: Beta, n: number, span: number) {
  const x = Array.from({ length: n }, (_, i) => (i * span) / (n - 1));
  return { x, y: x.map((k) => lossCurve(beta, k)), w: x.map(() => 1) };
}

describe('fitEq1 recovers β from noiseless data', () => {
  it.each([
    ['Seq2Seq-like, per step', [0.0021, 1.07, 0.07], 1000],
    ['no asymptote (β2 = 0)', [0.003, 1, 0], 2000],
    ['high floor', [0.0005, 1, 0.3], 4000],
    ['fast bend', [0.05, 1, 0.15], 500],
  ] as const)('%s', (_name, beta, span) => {
    const fit = fitEq1(noiseless(beta, 50, span));
    expect(fit.beta[0] / beta[0]).toBeCloseTo(1, 3);
    expect(fit.beta[1] / beta[1]).toBeCloseTo(1, 3);
    expect(fit.beta[2]).toBeCloseTo(beta[2], 4);
    expect(fit.sse).toBeLessThan(1e-9);
  });

  it('the paper’s transform fit also recovers β on noiseless data', () => {
    const beta: Beta = [0.0021, 1.07, 0.07];
    const fit = fitEq1Paper(noiseless(beta, 50, 1000));
    expect(fit.beta[0] / beta[0]).toBeCloseTo(1, 2);
    expect(fit.beta[2]).toBeCloseTo(beta[2], 3);
  });

  it('a flat series gives a flat curve (β0 = 0)', () => {
    const fit = fitEq1({ x: [0, 1, 2, 3, 4, 5], y: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5], w: [1, 1, 1, 1, 1, 1] });
    expect(lossCurve(fit.beta, 100)).toBeCloseTo(0.5, 9);
  });
});
