import { describe, expect, it } from 'vitest';
import { fitPolluxThroughput, polluxStepTime, type PolluxParams } from './pollux-throughput';
import { syntheticPlacements } from './allreduce-synthetic';
import type { AllReduceSample } from './allreduce-types';

const TRUTH: PolluxParams = {
  alphaGrad: 0.05,
  betaGrad: 0.004,
  alphaLocal: 0.09,
  betaLocal: 0.01,
  alphaNode: 0.3,
  betaNode: 0.006,
  gamma: 2,
};

function measure(p: PolluxParams, filter: (w: number, n: number) => boolean = () => true): AllReduceSample[] {
  return syntheticPlacements().flatMap((placement) => {
    const counts = [...placement].map(Number);
    const workers = counts.reduce((a, b) => a + b, 0);
    const servers = counts.length;
    if (!filter(workers, servers)) return [];
    return [20, 60, 180].map((localBatch) => ({
      workers,
      servers,
      localBatch,
      stepsPerSec: 1 / polluxStepTime(p, workers, servers, localBatch),
    }));
  });
}

describe('polluxStepTime', () => {
  it.each([
    { name: 'one GPU: compute only', w: 1, n: 1, m: 10, want: 0.05 + 0.04 },
    { name: 'γ = 1 adds compute and sync', w: 4, n: 1, m: 10, gamma: 1, want: 0.09 + 0.09 + 0.02 },
    { name: 'γ = 2 is the 2-norm', w: 2, n: 2, m: 10, gamma: 2, want: Math.hypot(0.09, 0.3) },
    { name: 'γ = 10 is nearly the max', w: 2, n: 2, m: 10, gamma: 10, want: 0.3 },
  ])('$name', ({ w, n, m, gamma, want }) => {
    expect(polluxStepTime({ ...TRUTH, gamma: gamma ?? TRUTH.gamma }, w, n, m)).toBeCloseTo(want, 3);
  });
});

describe('fitPolluxThroughput', () => {
  it('recovers its own law from noise-free placements', () => {
    const model = fitPolluxThroughput(measure(TRUTH));
    for (const [w, n, m] of [
      [3, 1, 40],
      [6, 2, 100],
      [16, 4, 20],
    ] as const)
      expect(model.predict(w, n, m).stepsPerSec * polluxStepTime(TRUTH, w, n, m)).toBeCloseTo(1, 2);
    expect(model.params.gamma).toBeCloseTo(2, 1);
  });

  it('without multi-node samples assumes inter-node sync at least 1.1× the intra-node one', () => {
    const model = fitPolluxThroughput(measure(TRUTH, (_, n) => n === 1));
    expect(model.params.alphaNode).toBeGreaterThanOrEqual(1.1 * model.params.alphaLocal);
    expect(model.params.betaNode).toBeGreaterThanOrEqual(1.1 * model.params.betaLocal - 1e-15);
    expect(model.predict(8, 2, 20).stepsPerSec).toBeLessThan(model.predict(8, 1, 20).stepsPerSec);
  });

  it('holds what the samples cannot see at 0: no sync without multi-GPU samples', () => {
    const model = fitPolluxThroughput(measure(TRUTH, (w) => w === 1));
    expect(model.params).toMatchObject({ alphaLocal: 0, betaLocal: 0, alphaNode: 0, betaNode: 0 });
    expect(model.predict(4, 1, 20).stepsPerSec).toBeCloseTo(model.predict(1, 1, 20).stepsPerSec, 6);
  });

  it('fits one sample, and rejects none', () => {
    const one = fitPolluxThroughput([{ workers: 1, servers: 1, stepsPerSec: 2, localBatch: 8 }]);
    expect(one.predict(1, 1, 8).stepsPerSec).toBeCloseTo(2, 3);
    expect(() => fitPolluxThroughput([])).toThrow(/at least one/);
  });
});
