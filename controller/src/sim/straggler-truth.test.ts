import { describe, expect, it } from 'vitest';
import type { TaskPlacement } from '../scheduling/types';
import {
  nextSlowdownChange,
  observedWorkerStepTimes,
  serverSlowdown,
  stragglerSpeedFactor,
  type Slowdown,
} from './straggler-truth';

const placement = (workers: string[], ps: string[] = ['p']): TaskPlacement[] => [
  ...ps.map((server, index) => ({ role: 'ps' as const, index, server })),
  ...workers.map((server, index) => ({ role: 'worker' as const, index, server })),
];

const slow: Slowdown[] = [
  { server: 'b', from: 100, to: 200, factor: 2 },
  { server: 'c', from: 150, factor: 4 },
  { server: 'p', from: 0, factor: 10 }, // a PS server: not a worker, no effect
];

describe('straggler truth', () => {
  it.each([
    { name: 'nothing slow yet', mode: 'sync', workers: ['a', 'b'], t: 50, factor: 1 },
    { name: 'sync waits for the slowest worker', mode: 'sync', workers: ['a', 'b'], t: 120, factor: 0.5 },
    {
      name: 'async: the mean of the workers’ speeds',
      mode: 'async',
      workers: ['a', 'b'],
      t: 120,
      factor: 0.75,
    },
    {
      name: 'two slow servers, sync: the worst one',
      mode: 'sync',
      workers: ['a', 'b', 'c'],
      t: 160,
      factor: 0.25,
    },
    {
      name: 'two slow servers, async',
      mode: 'async',
      workers: ['a', 'b', 'c', 'd'],
      t: 160,
      factor: (1 + 0.5 + 0.25 + 1) / 4,
    },
    {
      name: 'the slowdown of b is over (to is exclusive)',
      mode: 'sync',
      workers: ['a', 'b'],
      t: 200,
      factor: 1,
    },
    {
      name: 'replaced: the worker left the slow server',
      mode: 'sync',
      workers: ['a', 'd'],
      t: 120,
      factor: 1,
    },
    { name: 'no workers', mode: 'sync', workers: [], t: 120, factor: 1 },
  ] as const)('$name', ({ mode, workers, t, factor }) => {
    expect(
      stragglerSpeedFactor({ mode, placement: placement([...workers]), slowdowns: slow, t }),
    ).toBeCloseTo(factor, 12);
  });

  it('overlapping slowdowns of one server: the larger factor', () => {
    const both: Slowdown[] = [
      { server: 'x', from: 0, to: 10, factor: 1.5 },
      { server: 'x', from: 5, to: 20, factor: 3 },
    ];
    expect([2, 7, 15, 25].map((t) => serverSlowdown(both, 'x', t))).toEqual([1.5, 3, 3, 1]);
  });

  it('reports per-worker step times the detector can read', () => {
    expect(
      observedWorkerStepTimes({
        baseStepSec: 0.5,
        placement: placement(['a', 'b', 'c']),
        slowdowns: slow,
        t: 160,
      }),
    ).toEqual({ 0: 0.5, 1: 1, 2: 2 });
  });

  it.each([
    { t: 0, next: 100 },
    { t: 100, next: 150 },
    { t: 150, next: 200 },
    { t: 200, next: Infinity },
  ])('next change after $t is $next', ({ t, next }) => {
    expect(nextSlowdownChange(slow, t)).toBe(next);
  });
});
