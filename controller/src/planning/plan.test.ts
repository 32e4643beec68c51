import { describe, expect, it } from 'vitest';
import type { Decision, JobDecision, TaskPlacement } from '../scheduling/types';
import { planChanges, type CurrentJob } from './plan';

const tasks = (ps: string[], workers: string[]): TaskPlacement[] => [
  ...ps.map((server, index) => ({ role: 'ps' as const, index, server })),
  ...workers.map((server, index) => ({ role: 'worker' as const, index, server })),
];
const holding = (ps: string[], workers: string[]): CurrentJob => ({
  shape: { ps: ps.length, workers: workers.length },
  placement: tasks(ps, workers),
});
const run = (
  jobId: string,
  ps: string[],
  workers: string[],
  replaceWorkers: number[] = [],
): Extract<JobDecision, { action: 'run' }> => ({
  jobId,
  action: 'run',
  shape: { ps: ps.length, workers: workers.length },
  placement: tasks(ps, workers),
  replaceWorkers,
});
const wait = (jobId: string): JobDecision => ({ jobId, action: 'wait', reason: 'full' });

describe('planChanges', () => {
  const cases: {
    name: string;
    current: [string, CurrentJob | null][];
    decision: JobDecision[];
    kinds: string[];
  }[] = [
    { name: 'new job starts', current: [], decision: [run('a', ['s1'], ['s1'])], kinds: ['start:a'] },
    {
      name: 'a job recorded as holding nothing starts',
      current: [['a', null]],
      decision: [run('a', ['s1'], ['s1'])],
      kinds: ['start:a'],
    },
    {
      name: 'unchanged job: no action',
      current: [['a', holding(['s1'], ['s1', 's2'])]],
      decision: [run('a', ['s1'], ['s1', 's2'])],
      kinds: [],
    },
    {
      name: 'same tasks listed in another order: no action',
      current: [['a', holding(['s1'], ['s1', 's2'])]],
      decision: [
        { ...run('a', ['s1'], ['s1', 's2']), placement: [...tasks(['s1'], ['s1', 's2'])].reverse() },
      ],
      kinds: [],
    },
    {
      name: 'shape change resizes',
      current: [['a', holding(['s1'], ['s1'])]],
      decision: [run('a', ['s1'], ['s1', 's1'])],
      kinds: ['resize:a'],
    },
    {
      name: 'same shape, a PS moved: resize',
      current: [['a', holding(['s1'], ['s1'])]],
      decision: [run('a', ['s2'], ['s1'])],
      kinds: ['resize:a'],
    },
    {
      name: 'running job now waits: suspend',
      current: [['a', holding(['s1'], ['s1'])]],
      decision: [wait('a')],
      kinds: ['suspend:a'],
    },
    { name: 'waiting job that holds nothing: no action', current: [], decision: [wait('a')], kinds: [] },
    {
      name: 'straggler moved elsewhere: replace-worker, not resize',
      current: [['a', holding(['s1'], ['s1', 's2', 's3'])]],
      decision: [run('a', ['s1'], ['s1', 's4', 's3'], [1])],
      kinds: ['replace-worker:a:1@s4'],
    },
    {
      name: 'straggler restarted in place: replace-worker',
      current: [['a', holding(['s1'], ['s1', 's2', 's3'])]],
      decision: [run('a', ['s1'], ['s1', 's2', 's3'], [2])],
      kinds: ['replace-worker:a:2@s3'],
    },
    {
      name: 'another worker moved besides the straggler: resize',
      current: [['a', holding(['s1'], ['s1', 's2', 's3'])]],
      decision: [run('a', ['s1'], ['s9', 's4', 's3'], [1])],
      kinds: ['resize:a'],
    },
    {
      name: 'suspends come before starts so resources are free first',
      current: [['b', holding(['s1'], ['s1'])]],
      decision: [run('a', ['s1'], ['s1']), wait('b')],
      kinds: ['suspend:b', 'start:a'],
    },
    {
      name: 'a job absent from the decision is left alone',
      current: [['gone', holding(['s1'], ['s1'])]],
      decision: [],
      kinds: [],
    },
  ];
  it.each(cases)('$name', ({ current, decision, kinds }) => {
    const plan = planChanges(new Map(current), { jobs: decision } satisfies Decision);
    expect(
      plan.actions.map((a) =>
        a.kind === 'replace-worker' ? `${a.kind}:${a.jobId}:${a.index}@${a.server}` : `${a.kind}:${a.jobId}`,
      ),
    ).toEqual(kinds);
  });

  it('a resize carries the old and the new shape and the full new placement', () => {
    const plan = planChanges(new Map([['a', holding(['s1'], ['s1'])]]), {
      jobs: [run('a', ['s1', 's2'], ['s1', 's2'])],
    });
    expect(plan.actions).toEqual([
      {
        kind: 'resize',
        jobId: 'a',
        from: { ps: 1, workers: 1 },
        shape: { ps: 2, workers: 2 },
        placement: tasks(['s1', 's2'], ['s1', 's2']),
      },
    ]);
  });
});
