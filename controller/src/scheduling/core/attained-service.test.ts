import { describe, expect, it } from 'vitest';
import { lasState, type LasParameters } from './attained-service';

const oneGpuPerWorker = (s: { workers: number }) => s.workers;
const shape = (workers: number) => ({ ps: 1, workers });
const params: LasParameters = { thresholds: [3600], promoteKnob: 8 };

describe('2D-LAS queues from the run history', () => {
  it.each([
    {
      name: 'never ran: first queue since arrival',
      runs: [],
      now: 500,
      p: params,
      expected: { queue: 0, enteredAt: 10, service: 0 },
    },
    {
      name: 'below the threshold stays in the first queue',
      runs: [{ shape: shape(2), from: 10, to: 1000 }],
      now: 1000,
      p: params,
      expected: { queue: 0, enteredAt: 10, service: 1980 },
    },
    {
      name: 'demoted the moment GPU-seconds cross the threshold (2 GPUs: 1,800 s)',
      runs: [{ shape: shape(2), from: 10, to: null }],
      now: 2000,
      p: params,
      expected: { queue: 1, enteredAt: 1810, service: 3980 },
    },
    {
      name: 'service is two-dimensional: 4 GPUs cross it in 900 s',
      runs: [{ shape: shape(4), from: 10, to: 1000 }],
      now: 1000,
      p: params,
      expected: { queue: 1, enteredAt: 910, service: 3960 },
    },
    {
      name: 'waiting demotes nobody back and promotes before STARVELIMIT',
      runs: [{ shape: shape(4), from: 10, to: 1010 }],
      now: 1010 + 7999,
      p: params,
      expected: { queue: 1, enteredAt: 910, service: 4000 },
    },
    {
      name: 'promoted to the first queue once it waited PROMOTEKNOB × its run time',
      runs: [{ shape: shape(4), from: 10, to: 1010 }],
      now: 1010 + 9000,
      p: params,
      expected: { queue: 0, enteredAt: 9010, service: 0 },
    },
    {
      name: 'waits add up over several stints (1,000 s run; 3,000 + 5,000 s waited)',
      runs: [
        { shape: shape(4), from: 10, to: 510 },
        { shape: shape(4), from: 3510, to: 4010 },
      ],
      now: 9010,
      p: params,
      expected: { queue: 0, enteredAt: 9010, service: 0 },
    },
    {
      name: 'promoteKnob 0 never promotes',
      runs: [{ shape: shape(4), from: 10, to: 1010 }],
      now: 1e7,
      p: { thresholds: [3600], promoteKnob: 0 },
      expected: { queue: 1, enteredAt: 910, service: 4000 },
    },
    {
      name: 'K queues: several thresholds crossed in one run',
      runs: [{ shape: shape(1), from: 10, to: 10_010 }],
      now: 10_010,
      p: { thresholds: [1000, 5000, 20_000], promoteKnob: 0 },
      expected: { queue: 2, enteredAt: 5010, service: 10_000 },
    },
  ])('$name', ({ runs, now, p, expected }) => {
    expect(lasState({ arrival: 10, runs, gpus: oneGpuPerWorker }, now, p)).toEqual(expected);
  });

  it('does not depend on the order the runs are listed in', () => {
    const runs = [
      { shape: shape(4), from: 3510, to: 4010 },
      { shape: shape(4), from: 10, to: 510 },
    ];
    const sorted = [...runs].reverse();
    expect(lasState({ arrival: 10, runs, gpus: oneGpuPerWorker }, 5000, params)).toEqual(
      lasState({ arrival: 10, runs: sorted, gpus: oneGpuPerWorker }, 5000, params),
    );
  });
});
