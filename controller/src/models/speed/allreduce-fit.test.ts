import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../random';
import { fitAllReduceSpeed } from './allreduce-fit';
import type { AllReduceSample } from './allreduce-types';
import { SYNTHETIC_ALLREDUCE_LAWS, syntheticPlacements } from './allreduce-synthetic';

type Law = (workers: number, servers: number, m: number) => number;

/** A law of the model's own family: T² = (a + b·m)² + [w>1](s + q·r)² + [n>1](u + v·r)². */
const ownFamily: Law = (w, n, m) => {
  const r = Math.max(w - 2, 0);
  const c = 0.02 + 0.004 * m;
  const ring = w > 1 ? 0.01 + 0.002 * r : 0;
  const net = n > 1 ? 0.1 + 0.004 * r : 0;
  return Math.sqrt(c * c + ring * ring + net * net);
};

function measure(
  law: Law,
  shapes: readonly (readonly [number, number, number])[],
  noise = 0,
  seed = 1,
): AllReduceSample[] {
  const random = seededRandom(seed);
  return shapes.map(([workers, servers, localBatch]) => ({
    workers,
    servers,
    localBatch,
    stepsPerSec: Math.exp(noise * gaussian(random)) / law(workers, servers, localBatch),
  }));
}

const SHAPES: readonly (readonly [number, number, number])[] = [
  [1, 1, 16],
  [1, 1, 64],
  [2, 1, 32],
  [4, 1, 16],
  [4, 1, 64],
  [4, 2, 32],
  [8, 2, 16],
  [8, 2, 64],
  [12, 3, 32],
  [16, 4, 16],
];

describe('fitAllReduceSpeed', () => {
  it('recovers a noise-free law of its own family at unseen shapes', () => {
    const model = fitAllReduceSpeed(measure(ownFamily, SHAPES));
    for (const [w, n, m] of [
      [3, 1, 40],
      [6, 2, 24],
      [16, 2, 8],
      [10, 4, 48],
    ] as const)
      expect(model.predict(w, n, m).stepsPerSec * ownFamily(w, n, m)).toBeCloseTo(1, 1);
  });

  it('is within a few percent of laws outside its family (noise 2%, every placement)', () => {
    for (const law of SYNTHETIC_ALLREDUCE_LAWS) {
      const all = syntheticPlacements().flatMap((p) => {
        const counts = [...p].map(Number);
        const w = counts.reduce((a, b) => a + b, 0);
        return law.batches.map((m) => [w, counts.length, m] as const);
      });
      const model = fitAllReduceSpeed(
        measure(
          law.stepTime,
          all.filter((_, i) => i % 3 === 0),
          0.02,
          4,
        ),
      );
      const misses = all.map(([w, n, m]) =>
        Math.abs(model.predict(w, n, m).stepsPerSec * law.stepTime(w, n, m) - 1),
      );
      misses.sort((a, b) => a - b);
      expect(misses[Math.floor(misses.length / 2)], law.name).toBeLessThan(0.05);
    }
  });

  it('with one sample at one worker: finite, and a second worker helps but less than twice (global batch kept)', () => {
    const model = fitAllReduceSpeed([{ workers: 1, servers: 1, stepsPerSec: 4 }], { globalBatch: 256 });
    expect(model.predict(1, 1).stepsPerSec).toBeCloseTo(4, 6);
    const two = model.predict(2, 1).stepsPerSec;
    expect(two).toBeGreaterThan(4);
    expect(two).toBeLessThan(8);
    expect(model.logSpread).toBe(0.5);
  });

  it('follows the runtime’s path: samples arrive one shape at a time at a fixed global batch', () => {
    // Truth: the γ = 2 Pollux-like law, 3% noise, 4 GPUs per server, packed placements.
    const law = SYNTHETIC_ALLREDUCE_LAWS[0]!.stepTime;
    const batch = 256;
    const path: [number, number][] = [
      [1, 1],
      [2, 1],
      [4, 1],
      [8, 2],
      [16, 4],
    ];
    const random = seededRandom(9);
    const seen: AllReduceSample[] = [];
    const errorAt = (w: number, n: number, model: ReturnType<typeof fitAllReduceSpeed>): number =>
      Math.abs(model.predict(w, n).stepsPerSec * law(w, n, batch / w) - 1);
    for (const [w, n] of path) {
      seen.push({
        workers: w,
        servers: n,
        stepsPerSec: Math.exp(0.03 * gaussian(random)) / law(w, n, batch / w),
      });
      const model = fitAllReduceSpeed(seen, { globalBatch: batch });
      for (let k = 1; k <= 32; k++) {
        const p = model.predict(k, Math.ceil(k / 4));
        expect(Number.isFinite(p.stepsPerSec) && p.stepsPerSec > 0).toBe(true);
      }
      if (seen.length >= 3) expect(errorAt(3, 1, model)).toBeLessThan(0.1);
      if (seen.length >= 4) expect(errorAt(12, 3, model)).toBeLessThan(0.15);
    }
  });

  it('a heavier sample pulls the fit toward itself', () => {
    const samples = measure(ownFamily, SHAPES);
    const off = { ...samples[5]!, stepsPerSec: samples[5]!.stepsPerSec * 0.7 };
    const light = fitAllReduceSpeed([...samples.slice(0, 5), off, ...samples.slice(6)]);
    const heavy = fitAllReduceSpeed([...samples.slice(0, 5), { ...off, weight: 50 }, ...samples.slice(6)]);
    const miss = (m: ReturnType<typeof fitAllReduceSpeed>): number =>
      Math.abs(Math.log(m.predict(off.workers, off.servers, off.localBatch).stepsPerSec / off.stepsPerSec));
    expect(miss(heavy)).toBeLessThan(miss(light) / 2);
  });

  it('drops one disturbed sample among ≥ 8 and then fits the rest', () => {
    const samples = measure(ownFamily, SHAPES, 0.01, 2);
    samples[6] = { ...samples[6]!, stepsPerSec: samples[6]!.stepsPerSec / 4 };
    const model = fitAllReduceSpeed(samples);
    expect(model.dropped).toEqual([6]);
    const [w, n, m] = SHAPES[6]!;
    expect(model.predict(w, n, m).stepsPerSec * ownFamily(w, n, m)).toBeCloseTo(1, 1);
    expect(fitAllReduceSpeed(measure(ownFamily, SHAPES, 0.01, 2)).dropped).toEqual([]);
  });

  it('its 90% interval holds most of the truth on noisy samples', () => {
    let inside = 0;
    let total = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const model = fitAllReduceSpeed(measure(ownFamily, SHAPES, 0.05, seed));
      for (const [w, n, m] of [
        [3, 1, 40],
        [6, 2, 24],
        [10, 4, 48],
      ] as const) {
        const p = model.predict(w, n, m);
        const truth = 1 / ownFamily(w, n, m);
        total += 1;
        if (p.lower <= truth && truth <= p.upper) inside += 1;
      }
    }
    expect(inside / total).toBeGreaterThan(0.75);
  });

  it('multi-server samples alone: a single worker is predicted finite and no faster than perfect scaling allows', () => {
    const samples = measure(ownFamily, [
      [4, 2, 32],
      [8, 2, 32],
      [8, 4, 16],
    ]);
    const model = fitAllReduceSpeed(samples);
    const one = model.predict(1, 1, 32).stepsPerSec;
    expect(Number.isFinite(one)).toBe(true);
    // Sync inside a server is free until seen (the prior), so one server is at least as fast as two.
    expect(model.predict(4, 1, 32).stepsPerSec).toBeGreaterThanOrEqual(model.predict(4, 2, 32).stepsPerSec);
  });

  it.each([
    { name: 'zero workers', sample: { workers: 0, servers: 1, stepsPerSec: 1 }, error: /workers/ },
    { name: 'fractional workers', sample: { workers: 1.5, servers: 1, stepsPerSec: 1 }, error: /workers/ },
    {
      name: 'more servers than workers',
      sample: { workers: 2, servers: 3, stepsPerSec: 1 },
      error: /servers/,
    },
    { name: 'zero speed', sample: { workers: 2, servers: 1, stepsPerSec: 0 }, error: /stepsPerSec/ },
    { name: 'NaN speed', sample: { workers: 2, servers: 1, stepsPerSec: Number.NaN }, error: /stepsPerSec/ },
    {
      name: 'negative batch',
      sample: { workers: 2, servers: 1, stepsPerSec: 1, localBatch: -1 },
      error: /localBatch/,
    },
    { name: 'zero weight', sample: { workers: 2, servers: 1, stepsPerSec: 1, weight: 0 }, error: /weight/ },
  ])('rejects a sample with $name', ({ sample, error }) => {
    expect(() => fitAllReduceSpeed([sample])).toThrow(error);
  });

  it('rejects no samples, a bad global batch and impossible shapes', () => {
    expect(() => fitAllReduceSpeed([])).toThrow(/at least one/);
    expect(() => fitAllReduceSpeed([{ workers: 1, servers: 1, stepsPerSec: 1 }], { globalBatch: 0 })).toThrow(
      /globalBatch/,
    );
    const model = fitAllReduceSpeed(measure(ownFamily, SHAPES));
    expect(() => model.predict(2, 3)).toThrow(/servers ≤ workers/);
    expect(() => model.predict(0, 1)).toThrow(/workers ≥ 1/);
    expect(() => model.predict(Number.NaN, 1)).toThrow(RangeError);
    expect(() => model.predict(4, 1, 0)).toThrow(/localBatch/);
  });
});
