import { describe, expect, it } from 'vitest';
import { detectStragglers } from './stragglers';

describe('detectStragglers', () => {
  const cases: {
    name: string;
    mode: 'sync' | 'async';
    times?: Record<number, number>;
    expected: number[];
  }[] = [
    {
      name: 'async: slower than half the median speed',
      mode: 'async',
      times: { 0: 1, 1: 1, 2: 2.5 },
      expected: [2],
    },
    {
      name: 'async: exactly half the median speed is not a straggler',
      mode: 'async',
      times: { 0: 1, 1: 1, 2: 2 },
      expected: [],
    },
    {
      name: 'async: several stragglers, sorted',
      mode: 'async',
      times: { 4: 9, 0: 1, 1: 1, 2: 1, 3: 5 },
      expected: [3, 4],
    },
    {
      name: 'sync: a gap that stands out',
      mode: 'sync',
      times: { 0: 1, 1: 1.02, 2: 0.98, 3: 1.6 },
      expected: [3],
    },
    {
      name: 'sync: ordinary jitter is not a straggler',
      mode: 'sync',
      times: { 0: 1, 1: 1.2, 2: 0.9, 3: 1.3 },
      expected: [],
    },
    {
      name: 'sync: a wide but even spread is not a straggler',
      mode: 'sync',
      times: { 0: 1, 1: 2, 2: 3, 3: 4 },
      expected: [],
    },
    { name: 'two workers: no majority, no verdict', mode: 'async', times: { 0: 1, 1: 10 }, expected: [] },
    { name: 'no step times', mode: 'async', expected: [] },
    {
      name: 'bad entries are ignored',
      mode: 'async',
      times: { 0: 1, 1: 1, 2: 1, 3: NaN, 4: -1 },
      expected: [],
    },
  ];
  it.each(cases)('$name', ({ mode, times, expected }) => {
    expect(detectStragglers(mode, times)).toEqual(expected);
  });
});
