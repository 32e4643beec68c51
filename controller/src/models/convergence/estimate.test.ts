import { describe, expect, it } from 'vitest';
import { lossCurve } from './curve';
import { estimateConvergence } from './estimate';
import { eq1Curve, observe, seededRandom, trueTotalSteps, withLrDrop } from './synthetic';
import type { Scenario } from './synthetic';
import type { LossPoint } from './types';

const SPE = 100;
const rule = { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 };
const seq2seq = eq1Curve({ b0: 0.21, b1: 1.07, b2: 0.07 }, SPE);
const scenario = (curve: Scenario['curve'], relative = 0.03): Scenario => ({
  name: 'test',
  paperForm: true,
  curve,
  rule,
  pointsPerEpoch: 10,
  noise: { relative, autocorrelation: 0.3, outlierRate: 0.01 },
});

describe('estimateConvergence', () => {
  it('predicts the true total of a noisy paper-form curve at half-way, inside its interval', () => {
    const truth = trueTotalSteps(seq2seq, rule) ?? NaN;
    const points = observe(scenario(seq2seq), truth / 2, seededRandom(7));
    const est = estimateConvergence(points, rule);
    if (est.status !== 'ok') throw new Error(est.reason);
    expect(Math.abs(est.predictedTotalSteps - truth) / truth).toBeLessThanOrEqual(0.1);
    expect(est.lower).toBeLessThanOrEqual(truth);
    expect(est.upper).toBeGreaterThanOrEqual(truth);
    expect(est.lower).toBeLessThanOrEqual(est.predictedTotalSteps);
    expect(est.upper).toBeGreaterThanOrEqual(est.predictedTotalSteps);
    expect(est.remainingSteps).toBe(est.predictedTotalSteps - (Math.floor(points.at(-1)?.step ?? 0) + 1));
    expect(est.converged).toBe(false);
  });

  it('reports β of the raw loss scale, on noiseless data exactly', () => {
    const curve = (k: number) => 3 * seq2seq(k); // a loss that starts near 3, not 1
    const points: LossPoint[] = Array.from({ length: 60 }, (_, i) => ({ step: i * 20, loss: curve(i * 20) }));
    const est = estimateConvergence(points, rule);
    if (est.status !== 'ok') throw new Error(est.reason);
    for (const k of [0, 500, 1180, 5000]) expect(lossCurve(est.beta, k) / curve(k)).toBeCloseTo(1, 5);
    expect(est.predictedTotalSteps).toBe(trueTotalSteps(seq2seq, rule));
  });

  it('says converged when the history already passes the convergence point', () => {
    const truth = trueTotalSteps(seq2seq, rule) ?? NaN;
    const est = estimateConvergence(observe(scenario(seq2seq, 0.01), truth * 1.5, seededRandom(1)), rule);
    expect(est.status === 'ok' && est.converged && est.remainingSteps === 0).toBe(true);
  });

  it('refits after a learning-rate drop and reports where', () => {
    const curve = withLrDrop(seq2seq, { atEpoch: 6, factor: 0.6, b0: 0.6, floorShare: 0.3 }, SPE);
    const est = estimateConvergence(observe(scenario(curve), 12 * SPE, seededRandom(2)), rule);
    if (est.status !== 'ok') throw new Error(est.reason);
    expect(est.lrDropStep).toBe(6 * SPE + 5);
    expect(est.fitStartStep).toBe(6 * SPE + 5);
  });

  it.each([
    [
      'too few points',
      Array.from({ length: 5 }, (_, i) => ({ step: i * 10, loss: 1 / (i + 1) })),
      /valid points/,
    ],
    ['a flat loss', Array.from({ length: 40 }, (_, i) => ({ step: i * 10, loss: 0.5 })), /not decreasing/],
    [
      'less than one epoch',
      Array.from({ length: 20 }, (_, i) => ({ step: i * 4, loss: 1 / (i + 1) })),
      /span less/,
    ],
    [
      'only garbage',
      [
        { step: NaN, loss: 1 },
        { step: 1, loss: -3 },
      ],
      /valid points/,
    ],
  ])('answers insufficient-data for %s', (_name, points, reason) => {
    const est = estimateConvergence(points, rule);
    expect(est.status).toBe('insufficient-data');
    if (est.status === 'insufficient-data') expect(est.reason).toMatch(reason);
  });

  it('answers insufficient-data for a noisy flat loss (at most 1 of 20 noisy copies slips through)', () => {
    const flat: Scenario = {
      ...scenario(() => 0.7, 0.05),
      noise: { relative: 0.05, autocorrelation: 0.5, outlierRate: 0 },
    };
    let ok = 0;
    for (let seed = 1; seed <= 20; seed++) {
      if (estimateConvergence(observe(flat, 6 * SPE, seededRandom(seed)), rule).status === 'ok') ok++;
    }
    expect(ok).toBeLessThanOrEqual(1);
  });

  it('answers insufficient-data right after a learning-rate drop', () => {
    const curve = withLrDrop(seq2seq, { atEpoch: 6, factor: 0.6, b0: 0.6, floorShare: 0.3 }, SPE);
    const est = estimateConvergence(observe(scenario(curve), 6.5 * SPE, seededRandom(2)), rule);
    expect(est.status).toBe('insufficient-data');
  });

  it.each([
    ['stepsPerEpoch', { ...rule, stepsPerEpoch: 0 }],
    ['threshold', { ...rule, threshold: -1 }],
    ['patience', { ...rule, patience: 1.5 }],
  ])('rejects an invalid %s', (_name, bad) => {
    expect(() => estimateConvergence([], bad)).toThrow(RangeError);
  });
});
