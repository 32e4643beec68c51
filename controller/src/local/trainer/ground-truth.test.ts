import { describe, expect, it } from 'vitest';
import { rng, trueEpochs, trueLoss, trueSpeed, type GroundTruth } from './ground-truth';
import { speedometerLine } from './mxnet-log';

const g: GroundTruth = {
  mode: 'sync',
  batchSize: 256,
  stepsPerEpoch: 100,
  theta: [0.002, 0.05, 0.03, 0.005, 0.01],
  beta: [0.01, 1, 0.1],
  threshold: 0.02,
  patience: 2,
  maxEpochs: 100,
};

describe('ground truth', () => {
  it.each([
    ['sync 1x1', g, 1, 1, 1 / (0.512 + 0.05 + 0.03 + 0.005 + 0.01)],
    ['sync 2x4', g, 2, 4, 1 / (0.128 + 0.05 + 0.06 + 0.02 + 0.02)],
    ['async 1x2', { ...g, mode: 'async' as const, theta: [1, 0.5, 0, 0.1] }, 1, 2, 2 / (1 + 1 + 0.1)],
  ])('speed %s', (_n, truth, ps, w, expected) => {
    expect(trueSpeed(truth, ps, w)).toBeCloseTo(expected, 10);
  });

  it('loss follows Eq. 1 and the rule stops it within maxEpochs', () => {
    expect(trueLoss(g, 0)).toBeCloseTo(1.1);
    const e = trueEpochs(g);
    expect(e).toBeGreaterThan(2);
    expect(e).toBeLessThan(100);
    // The rule really holds at e and not two epochs earlier.
    const n = (k: number) => trueLoss(g, k * 100) / trueLoss(g, 0);
    expect(n(e - 1) - n(e)).toBeLessThan(0.02);
    expect(n(e - 3) - n(e - 2)).toBeGreaterThanOrEqual(0.02);
  });

  it('noise is reproducible', () => {
    const a = rng(7);
    const b = rng(7);
    expect([a.gaussian(), a.uniform()]).toEqual([b.gaussian(), b.uniform()]);
  });

  it('writes the Speedometer line MXNet writes', () => {
    const line = speedometerLine({
      rank: 0,
      at: new Date(2024, 0, 2, 3, 4, 5, 6),
      epoch: 1,
      from: 0,
      to: 50,
      samplesPerSec: 123.456,
      loss: 0.5,
    });
    expect(line).toBe(
      '2024-01-02 03:04:05,006 Node[0] Epoch[1] Batch [0-50]\tSpeed: 123.46 samples/sec\tcross-entropy=0.500000',
    );
  });
});
