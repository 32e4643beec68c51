import { describe, expect, it } from 'vitest';
import { freshArrays } from '../scratch-arena';
import { compareAt, estimatePairs, heldOutInverseCurves, mean } from './candidate-trials';
import { lossCurve } from './curve';
import { fitLateStart } from './late-start';
import { plateauCurve } from './synthetic';
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
    const r = compareAt(plateau, {
      progress: 0.75,
      seeds: 20,
      without: { lateStart: false },
      mark: (e) => (e.fitStartStep ?? 0) > 0,
    });
    expect(r.withIt.length).toBeGreaterThanOrEqual(18);
    expect(r.marked).toBeGreaterThanOrEqual(5);
    expect(mean(r.withIt)).toBeLessThan(0.8 * mean(r.withoutIt));
  });

  it('never changes the estimate of a 1/k curve, early or late', () => {
    for (const [a, b] of estimatePairs(heldOutInverseCurves(noise), { lateStart: false }))
      expect(a).toEqual(b);
  });
});
