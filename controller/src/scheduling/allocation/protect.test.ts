import { describe, expect, it } from 'vitest';
import { exact, job, server, snapshot, type SnapshotBuilder } from '../testing/builders';
import type { PolicyOptions } from '../registry';
import { decideBy, running, shapeOf } from '../testing/decide';

/** Diminishing returns: a shrink from 1+2 to 1+1 slows the job by √2 only. */
const sqrtWorkers = exact((_p, w) => Math.sqrt(w));

/** A job running at 1+2 on a 4-core server and a newcomer whose 1+1 needs a core it holds. */
const newcomerNeedsRoom = (remainingSteps: number): SnapshotBuilder =>
  snapshot()
    .restartCost(30)
    .servers(server('s1').cpu(4))
    .jobs(
      job('run')
        .speed(sqrtWorkers)
        .remaining(remainingSteps)
        .running({ ps: 1, workers: 2 }, { ps: ['s1'], workers: ['s1', 's1'] }),
      job('new').arrival(10).speed(sqrtWorkers).remaining(1000),
    );

describe('shrink protection: a running job is not slowed down for less than it loses', () => {
  const cases: {
    name: string;
    input: SnapshotBuilder;
    options?: PolicyOptions;
    expected: Record<string, string>;
  }[] = [
    {
      // t_cur = 20/√2 ≈ 14 s; at 1+1: 20 s + 30 s pause → loss 36 s ≥ 14 s the newcomer would wait.
      name: 'a job 14 s from its end keeps its shape; the newcomer waits for it',
      input: newcomerNeedsRoom(20),
      expected: { run: '1+2', new: 'wait' },
    },
    {
      // t_cur ≈ 2,121 s; at 1+1: 3,000 s + 30 s → loss 909 s < 2,121 s: the shrink pays off.
      name: 'a long job still shrinks to admit the newcomer',
      input: newcomerNeedsRoom(3000),
      expected: { run: '1+1', new: '1+1' },
    },
    {
      name: 'protect: false restores the shrink of the nearly finished job',
      input: newcomerNeedsRoom(20),
      options: { protect: false },
      expected: { run: '1+1', new: '1+1' },
    },
    {
      name: 'without the resize cost (resizeCost: false) nothing is protected',
      input: newcomerNeedsRoom(20),
      options: { resizeCost: false },
      expected: { run: '1+1', new: '1+1' },
    },
  ];
  it.each(cases)('$name', ({ input, options, expected }) => {
    const d = decideBy('optimus', input.build(), options);
    expect(Object.fromEntries(Object.keys(expected).map((id) => [id, shapeOf(d, id)]))).toEqual(expected);
  });
});

describe('keep shrunk: a running job that shrinks keeps its remaining tasks where they are', () => {
  // `run` holds 1 PS on s1 and workers on s1, s2, s2; shrunk to 1+1 it keeps PS 0 and worker 0
  // on s1, which leaves s2 whole for the newcomer.
  const input = () =>
    snapshot()
      .restartCost(30)
      .servers(server('s1').cpu(2), server('s2').cpu(2))
      .jobs(
        job('run')
          .speed(sqrtWorkers)
          .remaining(3000)
          .running({ ps: 1, workers: 3 }, { ps: ['s1'], workers: ['s1', 's2', 's2'] }),
        job('new').arrival(10).speed(sqrtWorkers).remaining(1000),
      )
      .build();
  const cases: { name: string; options?: PolicyOptions; run: string[]; newcomer: string[] }[] = [
    {
      name: 'default: the lowest-indexed tasks stay on their servers',
      run: ['ps0@s1', 'worker0@s1'],
      newcomer: ['ps0@s2', 'worker0@s2'],
    },
    {
      name: 'keepShrunk: false places it afresh, moving its PS',
      options: { keepShrunk: false },
      run: ['ps0@s2', 'worker0@s2'],
      newcomer: ['ps0@s1', 'worker0@s1'],
    },
  ];
  it.each(cases)('$name', ({ options, run, newcomer }) => {
    const d = decideBy('optimus', input(), options);
    const where = (id: string) => running(d, id).placement.map((t) => `${t.role}${t.index}@${t.server}`);
    expect(shapeOf(d, 'run')).toBe('1+1');
    expect(where('run')).toEqual(run);
    expect(where('new')).toEqual(newcomer);
  });
});
