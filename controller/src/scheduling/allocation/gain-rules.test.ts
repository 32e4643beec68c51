import { describe, expect, it } from 'vitest';
import { exact, job, server, snapshot, type SnapshotBuilder } from '../testing/builders';
import type { PolicyOptions } from '../registry';
import { decideBy, shapeOf } from '../testing/decide';

/** Speed grows with workers only. */
const linear = exact((_p, w) => w);
/** Speed grows with the square of the workers: each worker speeds the job up by a larger factor. */
const superLinear = exact((_p, w) => w * w);
/** Neither a PS nor a worker alone helps; one of each does (a PS-bound job). */
const pairsOnly = exact((p, w) => Math.min(p, w));

describe('Optimus allocation: rules beyond the paper', () => {
  const cases: {
    name: string;
    input: SnapshotBuilder;
    options?: PolicyOptions;
    expected: Record<string, string>;
  }[] = [
    {
      name: 'relative gain (default): extra tasks go to the job they speed up most, not the longest',
      input: snapshot()
        .servers(server('s1').cpu(6))
        .jobs(job('long').speed(linear).remaining(1000), job('short').speed(superLinear).remaining(100)),
      expected: { long: '1+1', short: '1+3' },
    },
    {
      name: "paper gain ('seconds'): the same tasks go to the long job",
      input: snapshot()
        .servers(server('s1').cpu(6))
        .jobs(job('long').speed(linear).remaining(1000), job('short').speed(superLinear).remaining(100)),
      options: { gain: 'seconds' },
      expected: { long: '1+3', short: '1+1' },
    },
    {
      name: 'look-ahead (default): +1 PS +1 worker together escapes a point where neither alone helps',
      input: snapshot()
        .servers(server('s1').cpu(64))
        .jobs(job('a').speed(pairsOnly).bounds({ maxPs: 3, maxWorkers: 3 })),
      expected: { a: '3+3' },
    },
    {
      name: 'without look-ahead the greedy loop stops at the local optimum',
      input: snapshot()
        .servers(server('s1').cpu(64))
        .jobs(job('a').speed(pairsOnly).bounds({ maxPs: 3, maxWorkers: 3 })),
      options: { lookAhead: false },
      expected: { a: '1+1' },
    },
    {
      name: 'look-ahead: a pair that does not fit is not granted',
      input: snapshot()
        .servers(server('s1').cpu(3))
        .jobs(job('a').speed(pairsOnly).bounds({ maxPs: 3, maxWorkers: 3 })),
      expected: { a: '1+1' },
    },
    {
      // Equal gains per unit, but moving the running job costs it a restart: its time at any
      // other shape includes the pause, so it keeps its worker and the newcomer runs at 1+1.
      name: 'restart-aware gain: a running job keeps its shape against an equal gain elsewhere',
      input: snapshot()
        .restartCost(30)
        .servers(server('s1').cpu(5))
        .jobs(
          job('a-new').speed(linear).remaining(1000),
          job('b-run')
            .speed(linear)
            .remaining(1000)
            .running({ ps: 1, workers: 2 }, { ps: ['s1'], workers: ['s1', 's1'] }),
        ),
      expected: { 'a-new': '1+1', 'b-run': '1+2' },
    },
    {
      name: 'restart-aware gain off (resizeCost: false): the tie goes by id and the running job shrinks',
      input: snapshot()
        .restartCost(30)
        .servers(server('s1').cpu(5))
        .jobs(
          job('a-new').speed(linear).remaining(1000),
          job('b-run')
            .speed(linear)
            .remaining(1000)
            .running({ ps: 1, workers: 2 }, { ps: ['s1'], workers: ['s1', 's1'] }),
        ),
      options: { resizeCost: false },
      expected: { 'a-new': '1+2', 'b-run': '1+1' },
    },
  ];
  it.each(cases)('$name', ({ input, options, expected }) => {
    const d = decideBy('optimus', input.build(), options);
    expect(Object.fromEntries(Object.keys(expected).map((id) => [id, shapeOf(d, id)]))).toEqual(expected);
  });
});
