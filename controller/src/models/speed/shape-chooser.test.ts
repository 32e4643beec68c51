import { describe, expect, it } from 'vitest';
import { chooseSampleShapes, type Shape } from './shape-chooser';

const key = (s: Shape) => `${s.ps},${s.workers}`;

describe('chooseSampleShapes', () => {
  it.each([
    { name: 'sync 5 of 10×10', opts: { budget: 5, maxPs: 10, maxWorkers: 10, mode: 'sync' as const } },
    { name: 'async 8 of 20×16', opts: { budget: 8, maxPs: 20, maxWorkers: 16, mode: 'async' as const } },
    { name: 'sync 3 of a 2×3 grid', opts: { budget: 3, maxPs: 2, maxWorkers: 3, mode: 'sync' as const } },
  ])('returns distinct shapes within the limits, deterministically: $name', ({ opts }) => {
    const a = chooseSampleShapes({ ...opts, seed: 7 });
    const b = chooseSampleShapes({ ...opts, seed: 7 });
    expect(a).toEqual(b);
    expect(a).toHaveLength(opts.budget);
    expect(new Set(a.map(key)).size).toBe(a.length);
    for (const s of a) {
      expect(s.ps).toBeGreaterThanOrEqual(1);
      expect(s.ps).toBeLessThanOrEqual(opts.maxPs);
      expect(s.workers).toBeGreaterThanOrEqual(1);
      expect(s.workers).toBeLessThanOrEqual(opts.maxWorkers);
    }
  });

  it('starts with the smallest shape and spans both dimensions (a D-optimal design leans on the extremes)', () => {
    const shapes = chooseSampleShapes({ budget: 5, maxPs: 12, maxWorkers: 12, mode: 'sync' });
    expect(shapes[0]).toEqual({ ps: 1, workers: 1 });
    const ps = shapes.map((s) => s.ps);
    const workers = shapes.map((s) => s.workers);
    expect([Math.min(...ps), Math.max(...ps), Math.min(...workers), Math.max(...workers)]).toEqual([
      1, 12, 1, 12,
    ]);
    expect(new Set(workers).size).toBeGreaterThanOrEqual(3);
  });

  it('picks only among the given candidates (deduplicated, within the maxima)', () => {
    const candidates = [
      { ps: 1, workers: 2 },
      { ps: 3, workers: 3 },
      { ps: 3, workers: 3 },
      { ps: 5, workers: 1 },
      { ps: 2, workers: 8 },
      { ps: 40, workers: 1 },
      { ps: 4, workers: 6 },
    ];
    const shapes = chooseSampleShapes({
      budget: 3,
      maxPs: 10,
      maxWorkers: 10,
      mode: 'sync',
      candidates,
      seed: 3,
    });
    expect(shapes).toHaveLength(3);
    for (const s of shapes) expect(candidates.filter((c) => c.ps <= 10).map(key)).toContain(key(s));
    const all = chooseSampleShapes({ budget: 10, maxPs: 10, maxWorkers: 10, mode: 'sync', candidates });
    expect(all.map(key).sort()).toEqual(['1,2', '2,8', '3,3', '4,6', '5,1']);
  });

  it('rejects a bad budget or an empty candidate set', () => {
    expect(() => chooseSampleShapes({ budget: 0, maxPs: 4, maxWorkers: 4, mode: 'sync' })).toThrow(/budget/);
    expect(() =>
      chooseSampleShapes({ budget: 2, maxPs: 4, maxWorkers: 4, mode: 'sync', candidates: [] }),
    ).toThrow(/no candidate/);
  });
});
