import { describe, expect, it } from 'vitest';
import type { ObservedJob, ObservedTask, TaskState } from '../observed';
import { nextStep, type NextStep } from './next-step';
import type { JobTarget, TargetTask } from './target';

const task = (role: 'ps' | 'worker', index: number, server: string, generation: number): TargetTask => ({
  role,
  index,
  server,
  generation,
});
const seen = (
  t: TargetTask,
  state: TaskState,
  generation: number | undefined = t.generation,
): ObservedTask => ({
  role: t.role,
  index: t.index,
  server: t.server,
  state,
  ...(generation === undefined ? {} : { generation }),
});
const target = (generation: number, tasks: TargetTask[], o: Partial<JobTarget> = {}): JobTarget => ({
  generation,
  tasks,
  checkpoint: true,
  restart: false,
  fitted: false,
  sinceMs: 0,
  deadlineMs: 1e12,
  ...o,
});
const job = (tasks: ObservedTask[], o: Partial<ObservedJob> = {}): ObservedJob => ({
  tasks,
  exited: null,
  finished: null,
  ...o,
});

const ps0 = task('ps', 0, 'a', 2);
const w0 = task('worker', 0, 'a', 2);
const w1 = task('worker', 1, 'b', 2);
const oldPs = task('ps', 0, 'a', 1);
const oldW = task('worker', 0, 'a', 1);
const end = { outcome: 'succeeded' as const, reason: 'Converged', message: '' };

const cases: [string, JobTarget, ObservedJob | undefined, NextStep['kind'], string?][] = [
  ['nothing runs: start every task', target(2, [ps0, w0]), job([]), 'start'],
  ['the job is unknown: start', target(2, [ps0, w0]), undefined, 'start'],
  [
    'the old generation runs: stop it first',
    target(2, [ps0, w0]),
    job([seen(oldPs, 'running'), seen(oldW, 'running')]),
    'stop',
  ],
  [
    'the old set is stopping: wait',
    target(2, [ps0, w0]),
    job([seen(oldPs, 'stopping'), seen(oldW, 'stopping')]),
    'wait',
    'stopping',
  ],
  [
    'one of the old set still runs while another stops: stop it',
    target(2, [ps0, w0]),
    job([seen(oldPs, 'stopping'), seen(oldW, 'running')]),
    'stop',
  ],
  [
    'half the new set started: start the rest',
    target(2, [ps0, w0, w1]),
    job([seen(ps0, 'running'), seen(w0, 'pending')]),
    'start',
  ],
  [
    'all started, one pending: wait for it',
    target(2, [ps0, w0]),
    job([seen(ps0, 'running'), seen(w0, 'pending')]),
    'wait',
    'running',
  ],
  [
    'all run at the generation: reached',
    target(2, [ps0, w0]),
    job([seen(ps0, 'running'), seen(w0, 'running')]),
    'reached',
  ],
  [
    'a task without a generation matches any',
    target(2, [ps0, w0]),
    job([seen(ps0, 'running', undefined), seen(w0, 'running', undefined)]),
    'reached',
  ],
  [
    'a task of the target failed: failed',
    target(2, [ps0, w0]),
    job([seen(ps0, 'running'), seen(w0, 'failed')]),
    'failed',
  ],
  [
    'a task on another server: stop it',
    target(2, [ps0, w0]),
    job([seen(ps0, 'running'), seen({ ...w0, server: 'c' }, 'running')]),
    'stop',
  ],
  ['a suspend with something left: stop', target(3, []), job([seen(ps0, 'running')]), 'stop'],
  ['a suspend with nothing left: reached', target(3, []), job([]), 'reached'],
  [
    'a finish records the end before anything stops',
    target(3, [], { end }),
    job([seen(ps0, 'running')]),
    'record-end',
  ],
  [
    'a finish once recorded stops what is left',
    target(3, [], { end }),
    job([seen(ps0, 'running')], { finished: end }),
    'stop',
  ],
  ['a finish of a job the backend no longer knows: reached', target(3, [], { end }), undefined, 'reached'],
];

describe('nextStep', () => {
  it.each(cases)('%s', (_name, t, observed, kind, waitFor) => {
    const next = nextStep(t, observed);
    expect(next.kind).toBe(kind);
    if (waitFor !== undefined && next.kind === 'wait') expect(next.for).toBe(waitFor);
  });

  it('stops only what does not belong to the target, with its checkpoint setting', () => {
    const t = target(2, [ps0, { ...w0, generation: 1 }], { checkpoint: false });
    const next = nextStep(t, job([seen(ps0, 'running'), seen(oldW, 'running'), seen(oldPs, 'running', 7)]));
    expect(next).toEqual({ kind: 'stop', tasks: [seen(oldPs, 'running', 7)], checkpoint: false });
  });

  it('waits for room before it starts what is missing, and starts only what is missing', () => {
    const t = target(2, [ps0, w0, w1]);
    const observed = job([seen(ps0, 'running'), seen(w0, 'running')]);
    expect(nextStep(t, observed, () => false)).toEqual({ kind: 'wait', for: 'room' });
    expect(nextStep(t, observed, (tasks) => tasks.length === 1)).toEqual({ kind: 'start', tasks: [w1] });
  });
});
