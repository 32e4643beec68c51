import { describe, expect, it } from 'vitest';
import { freshArrays } from '../scratch-arena';
import { lossCurve } from './curve';
import { estimateConvergence } from './estimate';
import { fitLateStart } from './late-start';
import { eq1Curve, observe, plateauCurve, seededRandom, trueTotalSteps } from './synthetic';
import type { Scenario } from './synthetic';

const SPE = 100;
const noise = { relative: 0.03, autocorrelation: 0.3, outlierRate: 0.01 };
// A warm-up of 5 epochs on a curve that eval convergence does not use: after it, Eq. 1 in (x − 250).
const plateau: Scenario = {
  name: 'plateau',
  paperForm: false,
  family: 'plateau',
  curve: plateauCurve({ b0: 0.4, b1: 0.8, b2: 0.1 }, 5, SPE),
  rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
  pointsPerEpoch: 8,
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
const mean = (xs: number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;

describe('the late-start candidate', () => {
  it('follows a noiseless warm-up curve that no fit from the segment start can', () => {
    // 15 epochs, one point per 10 steps: the fitted points start at epoch 5. After the warm-up the truth is
    // Eq. 1 in (x − 250) with β1 = 0.8: any origin from 50 on fits it exactly, 0 would need β1 = −0.2.
    const x = Float64Array.from({ length: 150 }, (_, i) => i * 10);
    const y = x.map((v) => plateau.curve(v));
    const fit = fitLateStart({ x, y, w: new Float64Array(150).fill(1), count: 150 }, freshArrays);
    expect(fit).not.toBeNull();
    expect(fit!.start).toBe(500);
    expect(fit!.origin).toBeGreaterThanOrEqual(50);
    for (const v of [600, 1000, 1490])
      expect(lossCurve(fit!.beta, v - fit!.origin)).toBeCloseTo(plateau.curve(v), 6);
  });

  it('predicts a warm-up curve better at 75% progress, and reports where its curve starts', () => {
    const truth = trueTotalSteps(plateau.curve, plateau.rule) ?? NaN;
    const withLate: number[] = [];
    const without: number[] = [];
    let shifted = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const points = observe(plateau, 0.75 * truth, seededRandom(seed));
      const a = estimateConvergence(points, plateau.rule);
      const b = estimateConvergence(points, plateau.rule, { lateStart: false });
      if (a.status !== 'ok' || b.status !== 'ok') continue;
      withLate.push(relErr(a.predictedTotalSteps, truth));
      without.push(relErr(b.predictedTotalSteps, truth));
      if ((a.fitStartStep ?? 0) > 0) shifted++;
    }
    expect(withLate.length).toBeGreaterThanOrEqual(18);
    expect(shifted).toBeGreaterThanOrEqual(5);
    expect(mean(withLate)).toBeLessThan(0.8 * mean(without));
  });

  it('never changes the estimate of a 1/k curve, early or late', () => {
    for (const s of [
      inverse({ b0: 0.21, b1: 1.07, b2: 0.07 }, 0.01),
      inverse({ b0: 0.12, b1: 1.2, b2: 0.2 }, 0.005),
    ]) {
      const truth = trueTotalSteps(s.curve, s.rule) ?? NaN;
      for (const progress of [0.25, 0.5, 0.75])
        for (let seed = 1; seed <= 15; seed++) {
          const points = observe(s, progress * truth, seededRandom(seed));
          expect(estimateConvergence(points, s.rule)).toEqual(
            estimateConvergence(points, s.rule, { lateStart: false }),
          );
        }
    }
  });
});
