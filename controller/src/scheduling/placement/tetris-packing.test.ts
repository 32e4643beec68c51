import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU } from '../../../../shared/src/units';
import { prepare } from '../core/prepare';
import { job, server, snapshot } from '../testing/builders';
import { tetrisPackingPlacer } from './tetris-packing';

/** Places the input's jobs with the given targets; returns each job's placed shape. */
function pack(targets: Record<string, { ps: number; workers: number }>, srtfWeight?: number) {
  const input = prepare(
    snapshot()
      .servers(server('s1').cpu(5))
      .jobs(
        // long: 1-core tasks, a million steps left; short: half-core tasks, ten steps left.
        job('long')
          .remaining(1e6)
          .ps({ [CPU]: 1 })
          .worker({ [CPU]: 1 }),
        job('short')
          .remaining(10)
          .ps({ [CPU]: 0.5 })
          .worker({ [CPU]: 0.5 }),
      )
      .build(),
  );
  const jobs = input.jobs.map((j) => ({ job: j, shape: targets[j.id]! }));
  const free = input.servers.map((s) => Float64Array.from(s.allocatable));
  const r = tetrisPackingPlacer(srtfWeight === undefined ? {} : { srtfWeight }).place({ input, jobs, free });
  return Object.fromEntries([...(r.shrunk ?? [])].map(([id, s]) => [id, `${s.ps}+${s.workers}`]));
}

describe('Tetris packing: pairs one at a time by packing score − ε·remaining work', () => {
  const targets = { long: { ps: 3, workers: 3 }, short: { ps: 3, workers: 3 } };
  // After both first bundles 2 cores are left: one pair of long, or two pairs of short.
  it.each([
    {
      name: 'm = 1 (the paper): the job with less work left gets the room',
      m: undefined,
      expected: { long: '1+1', short: '3+3' },
    },
    {
      name: 'm = 0 (packing only): the better aligned, larger tasks get it',
      m: 0,
      expected: { long: '2+2', short: '1+1' },
    },
  ])('$name', ({ m, expected }) => {
    expect(pack(targets, m)).toEqual(expected);
  });

  it('never grows a job past the shape it was allocated', () => {
    expect(pack({ long: { ps: 1, workers: 1 }, short: { ps: 2, workers: 2 } })).toEqual({
      long: '1+1',
      short: '2+2',
    });
  });
});
