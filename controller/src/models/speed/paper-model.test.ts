import { describe, expect, it } from 'vitest';
import { fitPaperSpeedModel } from './paper-model';
import type { SpeedSample } from './types';

const GRID = [
  [1, 1],
  [1, 4],
  [2, 2],
  [2, 8],
  [3, 5],
  [4, 1],
  [4, 4],
  [6, 3],
  [8, 8],
  [5, 10],
  [10, 2],
  [3, 12],
] as const;

function eq4(theta: readonly number[], batch: number) {
  return (p: number, w: number) =>
    1 / ((theta[0]! * batch) / w + theta[1]! + (theta[2]! * w) / p + theta[3]! * w + theta[4]! * p);
}
function eq3(theta: readonly number[]) {
  return (p: number, w: number) => w / (theta[0]! + (theta[1]! * w) / p + theta[2]! * w + theta[3]! * p);
}
function samplesOf(law: (p: number, w: number) => number): SpeedSample[] {
  return GRID.map(([ps, workers]) => ({ ps, workers, stepsPerSec: law(ps, workers) }));
}

describe('fitPaperSpeedModel', () => {
  it.each([
    { name: 'Eq. 4, paper ResNet-50 sync θ', theta: [1.02 / 32, 2.78, 4.92, 0, 0.02], batch: 32 },
    { name: 'Eq. 4, all terms active', theta: [0.001, 0.1, 0.3, 0.02, 0.01], batch: 128 },
  ])('recovers noiseless sync data exactly: $name', ({ theta, batch }) => {
    const law = eq4(theta, batch);
    const model = fitPaperSpeedModel(samplesOf(law), { mode: 'sync', globalBatch: batch });
    model.theta.forEach((v, i) => expect(v).toBeCloseTo(theta[i]!, 6));
    for (const [p, w] of [
      [7, 7],
      [1, 16],
      [20, 3],
    ] as const) {
      expect(model.predict(p, w).stepsPerSec).toBeCloseTo(law(p, w), 8);
    }
  });

  it.each([
    { name: 'Eq. 3, paper ResNet-50 async θ', theta: [2.83, 3.92, 0, 0.11] },
    { name: 'Eq. 3, all terms active', theta: [0.3, 0.6, 0.02, 0.01] },
  ])('recovers noiseless async data exactly: $name', ({ theta }) => {
    const law = eq3(theta);
    const model = fitPaperSpeedModel(samplesOf(law), { mode: 'async' });
    model.theta.forEach((v, i) => expect(v).toBeCloseTo(theta[i]!, 6));
    expect(model.predict(9, 9).stepsPerSec).toBeCloseTo(law(9, 9), 8);
  });

  it('gives an interval around the point and rejects bad input', () => {
    const model = fitPaperSpeedModel(samplesOf(eq3([1, 1, 0, 0])).slice(0, 3), { mode: 'async' });
    const p = model.predict(2, 2);
    expect(p.lower).toBeLessThan(p.stepsPerSec);
    expect(p.upper).toBeGreaterThan(p.stepsPerSec);
    expect(() => fitPaperSpeedModel([], { mode: 'sync' })).toThrow(/at least one/);
    expect(() => fitPaperSpeedModel([{ ps: 1, workers: 1, stepsPerSec: 0 }], { mode: 'sync' })).toThrow(
      /stepsPerSec/,
    );
    expect(() => model.predict(0, 1)).toThrow(/ps ≥ 1/);
  });
});
