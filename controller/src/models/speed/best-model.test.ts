import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../random';
import { fitSpeedModel } from './best-model';
import { eq3Law, eq4Law, type SpeedLaw } from './synthetic';
import type { SpeedSample } from './types';

const SHAPES = [
  [1, 1],
  [1, 6],
  [2, 3],
  [2, 10],
  [3, 1],
  [3, 7],
  [4, 4],
  [5, 12],
  [6, 2],
  [8, 8],
  [10, 5],
  [12, 12],
  [7, 3],
  [9, 1],
] as const;

function measure(
  law: SpeedLaw,
  noise = 0,
  seed = 1,
  shapes: readonly (readonly [number, number])[] = SHAPES,
): SpeedSample[] {
  const random = seededRandom(seed);
  return shapes.map(([ps, workers]) => ({
    ps,
    workers,
    stepsPerSec: law.stepsPerSec(ps, workers) * Math.exp(noise * gaussian(random)),
  }));
}

const UNSEEN = [
  [11, 2],
  [1, 12],
  [5, 5],
  [16, 16],
  [2, 1],
] as const;

describe('fitSpeedModel', () => {
  it.each([
    { name: 'Eq. 4 sync, paper ResNet-50 θ', law: eq4Law('a', [1.02 / 32, 2.78, 4.92, 0, 0.02], 32) },
    { name: 'Eq. 4 sync, every term active', law: eq4Law('b', [0.001, 0.1, 0.3, 0.02, 0.01], 128) },
    { name: 'Eq. 3 async, paper ResNet-50 θ', law: eq3Law('c', [2.83, 3.92, 0, 0.11]) },
    { name: 'Eq. 3 async, every term active', law: eq3Law('d', [0.3, 0.6, 0.02, 0.01]) },
  ])('recovers a noiseless paper law: $name', ({ law }) => {
    const model = fitSpeedModel(measure(law), { mode: law.mode, globalBatch: law.globalBatch });
    for (const [p, w] of UNSEEN) {
      const truth = law.stepsPerSec(p, w);
      expect(Math.abs(model.predict(p, w).stepsPerSec - truth) / truth).toBeLessThan(1e-4);
    }
  });

  it('gives intervals that contain the point, and wide ones when samples are few', () => {
    const law = eq4Law('a', [0.002, 0.2, 0.4, 0.01, 0.005], 64);
    const few = fitSpeedModel(measure(law, 0.05).slice(0, 2), { mode: 'sync', globalBatch: 64 });
    const many = fitSpeedModel(measure(law, 0.05), { mode: 'sync', globalBatch: 64 });
    for (const model of [few, many]) {
      const p = model.predict(4, 6);
      expect(p.lower).toBeLessThan(p.stepsPerSec);
      expect(p.upper).toBeGreaterThan(p.stepsPerSec);
    }
    const ratio = (m: typeof few) => m.predict(4, 6).upper / m.predict(4, 6).lower;
    expect(ratio(few)).toBeGreaterThan(ratio(many));
  });

  it('covers the truth about 90% of the time on noisy data', () => {
    const law = eq4Law('a', [0.002, 0.2, 0.4, 0.01, 0.005], 64);
    let inside = 0;
    let total = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const model = fitSpeedModel(measure(law, 0.05, seed), { mode: 'sync', globalBatch: 64 });
      const random = seededRandom(1000 + seed);
      for (const [p, w] of UNSEEN) {
        const observed = law.stepsPerSec(p, w) * Math.exp(0.05 * gaussian(random));
        const { lower, upper } = model.predict(p, w);
        inside += lower <= observed && observed <= upper ? 1 : 0;
        total += 1;
      }
    }
    expect(inside / total).toBeGreaterThan(0.75);
  });

  it('drops a grossly wrong sample (a disturbed pre-run)', () => {
    const law = eq4Law('a', [0.002, 0.2, 0.4, 0.01, 0.005], 64);
    const samples = measure(law, 0.02);
    samples[6] = { ...samples[6]!, stepsPerSec: samples[6]!.stepsPerSec * 0.3 };
    const model = fitSpeedModel(samples, { mode: 'sync', globalBatch: 64 });
    expect(model.dropped).toEqual([6]);
    const truth = law.stepsPerSec(5, 5);
    expect(Math.abs(model.predict(5, 5).stepsPerSec - truth) / truth).toBeLessThan(0.08);
  });

  it('honours a measured shape (the blend with interpolation)', () => {
    // A law the candidates cannot express exactly: the measured shapes pull predictions toward themselves.
    const law: SpeedLaw = {
      name: 'x',
      mode: 'sync',
      globalBatch: 1,
      stepsPerSec: (p, w) => 1 / (0.1 + Math.max(0.5 / w, (0.3 * w) / p)),
    };
    const samples = measure(law);
    const model = fitSpeedModel(samples, { mode: 'sync', globalBatch: 1 });
    const lawOnly = fitSpeedModel(samples, { mode: 'sync', globalBatch: 1, residualKernel: false });
    const errAt = (m: typeof model, s: SpeedSample) =>
      Math.abs(Math.log(m.predict(s.ps, s.workers).stepsPerSec / s.stepsPerSec));
    const sum = (m: typeof model) => samples.reduce((a, s) => a + errAt(m, s), 0);
    expect(sum(model)).toBeLessThan(sum(lawOnly));
  });

  it('rejects no samples and invalid samples with clear errors', () => {
    expect(() => fitSpeedModel([], { mode: 'sync' })).toThrow(/at least one/);
    expect(() => fitSpeedModel([{ ps: 0, workers: 1, stepsPerSec: 1 }], { mode: 'sync' })).toThrow(/#0: ps/);
    expect(() => fitSpeedModel([{ ps: 1, workers: 1, stepsPerSec: Number.NaN }], { mode: 'async' })).toThrow(
      /stepsPerSec/,
    );
  });

  it('still answers with a single sample (wide interval)', () => {
    const model = fitSpeedModel([{ ps: 2, workers: 2, stepsPerSec: 1.5 }], { mode: 'sync' });
    const p = model.predict(2, 2);
    expect(p.stepsPerSec).toBeGreaterThan(0);
    expect(p.upper / p.lower).toBeGreaterThan(4);
  });
});
