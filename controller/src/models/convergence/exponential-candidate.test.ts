import { describe, expect, it } from 'vitest';
import { compareAt, estimatePairs, heldOutInverseCurves, mean } from './candidate-trials';
import { expCurve } from './synthetic';
import type { Scenario } from './synthetic';

const SPE = 100;
const noise = { relative: 0.04, autocorrelation: 0.4, outlierRate: 0.01 };
// Parameters that `eval convergence` does not use: the choice is checked on curves it was not tuned on.
const exponential: Scenario = {
  name: 'exp',
  paperForm: false,
  curve: expCurve({ a: 0.9, tau: 30, floor: 0.1 }, SPE),
  rule: { stepsPerEpoch: SPE, threshold: 0.003, patience: 3 },
  pointsPerEpoch: 5,
  noise,
};

describe('the estimator with the exponential candidate', () => {
  it('predicts an exponentially flattening curve far better at 75% progress, and says so', () => {
    const r = compareAt(exponential, {
      progress: 0.75,
      seeds: 20,
      without: { fastShape: false },
      mark: (e) => e.exponential !== undefined,
    });
    expect(r.withIt.length).toBeGreaterThanOrEqual(18);
    expect(r.marked).toBeGreaterThanOrEqual(10);
    expect(mean(r.withIt)).toBeLessThan(0.6 * mean(r.withoutIt));
  });

  it('never lets the exponential predict a 1/k curve, early or late', () => {
    for (const [a, b] of estimatePairs(heldOutInverseCurves(noise), { fastShape: false }))
      expect(a).toEqual(b);
  });
});
