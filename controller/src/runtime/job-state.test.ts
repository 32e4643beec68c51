import { describe, expect, it } from 'vitest';
import type { JobPhase } from './job-record';
import { jobState, type JobState } from './job-state';

describe('job state', () => {
  it.each([
    [
      'a running job mid-rollout (its tasks restarting) is resizing, not pending',
      'running',
      false,
      true,
      'resizing',
    ],
    ['a running job whose tasks run is running', 'running', true, false, 'running'],
    ['a running job observed holding nothing is resizing', 'running', false, false, 'resizing'],
    ['a pre-run job moving to its next sample shape is resizing', 'pre-run', true, true, 'resizing'],
    ['a pre-run job measuring is pre-run', 'pre-run', true, false, 'pre-run'],
    ['a pending job being started is resizing, never "new"', 'pending', false, true, 'resizing'],
    ['a pending job nobody started is pending', 'pending', false, false, 'pending'],
    ['a waiting job is waiting', 'waiting', false, false, 'waiting'],
    ['a finished job stays done while its last tasks stop', 'done', true, true, 'done'],
    ['a failed job stays failed', 'failed', false, true, 'failed'],
  ] as [string, JobPhase, boolean, boolean, JobState][])(
    '%s',
    (_name, phase, holds, rolloutInFlight, want) => {
      expect(jobState(phase, { holds, rolloutInFlight })).toBe(want);
    },
  );
});
