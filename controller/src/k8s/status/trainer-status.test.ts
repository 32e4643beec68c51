import { describe, expect, it } from 'vitest';
import { formatEta, trainerStatusOf } from './trainer-status';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('trainerStatus (Kubeflow Trainer KEP-2779 shape)', () => {
  it.each([
    {
      name: 'running with a prediction',
      input: { progress: 0.404, predictedCompletionSec: NOW / 1000 + 3900 },
      status: { progressPercentage: 40, estimatedRemainingSeconds: 3900 },
      eta: '1h05m',
    },
    {
      name: 'a prediction in the past counts as due now',
      input: { progress: 0.99, predictedCompletionSec: NOW / 1000 - 60 },
      status: { progressPercentage: 99, estimatedRemainingSeconds: 0 },
      eta: '0s',
    },
    { name: 'nothing known yet', input: {}, status: {}, eta: null },
    {
      name: 'progress above 1 is clamped',
      input: { progress: 1.7, predictedCompletionSec: null },
      status: { progressPercentage: 100 },
      eta: null,
    },
    {
      name: 'finished',
      input: { progress: 0.93, predictedCompletionSec: null, finished: true },
      status: { progressPercentage: 100, estimatedRemainingSeconds: 0 },
      eta: null,
    },
  ])('$name', ({ input, status, eta }) => {
    expect(trainerStatusOf({ ...input, nowMs: NOW })).toEqual({
      trainerStatus: { ...status, lastUpdatedTime: '2026-01-01T12:00:00Z' },
      eta,
    });
  });

  it.each([
    [0, '0s'],
    [59, '59s'],
    [60, '1m'],
    [3599, '59m'],
    [3600, '1h00m'],
    [90_061, '1d1h'],
  ])('formats %i s as %s', (s, text) => expect(formatEta(s)).toBe(text));
});
