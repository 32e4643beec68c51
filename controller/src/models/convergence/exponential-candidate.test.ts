import { describe, expect, it } from 'vitest';
import { estimateConvergence } from './estimate';
import { eq1Curve, expCurve, observe, seededRandom, trueTotalSteps } from './synthetic';
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
const inverse = (b: { b0: number; b1: number; b2: number }, threshold: number): Scenario => ({
  name: 'inverse',
  paperForm: true,
  curve: eq1Curve(b, SPE),
  rule: { stepsPerEpoch: SPE, threshold, patience: 3 },
  pointsPerEpoch: 8,
  noise,
});

const relErr = (predicted: number, truth: number): number => Math.abs(predicted - truth) / truth;

describe('the estimator with the exponential candidate', () => {
  it('predicts an exponentially flattening curve far better at 75% progress, and says so', () => {
    const truth = trueTotalSteps(exponential.curve, exponential.rule) ?? NaN;
    const withShape: number[] = [];
    const without: number[] = [];
    let reported = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const points = observe(exponential, 0.75 * truth, seededRandom(seed));
      const a = estimateConvergence(points, exponential.rule);
      const b = estimateConvergence(points, exponential.rule, { fastShape: false });
      if (a.status !== 'ok' || b.status !== 'ok') continue;
      withShape.push(relErr(a.predictedTotalSteps, truth));
      without.push(relErr(b.predictedTotalSteps, truth));
      if (a.exponential !== undefined) reported++;
    }
    const mean = (xs: number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;
    expect(withShape.length).toBeGreaterThanOrEqual(18);
    expect(reported).toBeGreaterThanOrEqual(10);
    expect(mean(withShape)).toBeLessThan(0.6 * mean(without));
  });

  it('never lets the exponential predict a 1/k curve, early or late', () => {
    for (const s of [
      inverse({ b0: 0.21, b1: 1.07, b2: 0.07 }, 0.01),
      inverse({ b0: 0.12, b1: 1.2, b2: 0.2 }, 0.005),
    ]) {
      const truth = trueTotalSteps(s.curve, s.rule) ?? NaN;
      for (const progress of [0.25, 0.5, 0.75])
        for (let seed = 1; seed <= 15; seed++) {
          const points = observe(s, progress * truth, seededRandom(seed));
          const a = estimateConvergence(points, s.rule);
          const b = estimateConvergence(points, s.rule, { fastShape: false });
          expect(a).toEqual(b);
        }
    }
  });
});
