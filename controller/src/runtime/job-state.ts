/**
 * A job's state as the API, the dashboard, the terminal and `/metrics` show it: its phase, except
 * while its shape is being changed. A job whose rollout is in flight — tasks checkpointing and
 * starting again at a new shape — is `resizing`: it holds resources and will run, so it is never
 * "waiting" nor "new", whatever the last observation saw of its tasks (none, while they restart).
 *
 * "In flight" is an input: observed ≠ target (`rollout/in-flight.ts`, ADR 0035). `apiPhase` there
 * says the same for the API's `phase`; this adds that a running job holding nothing is resizing.
 */
import type { JobPhase } from './job-record';

export const JOB_STATES = ['pending', 'pre-run', 'running', 'resizing', 'waiting', 'done', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface StateInputs {
  /** The job holds resources as last observed (its tasks run). */
  readonly holds: boolean;
  /** A rollout of the job is in flight. */
  readonly rolloutInFlight: boolean;
}

/**
 * @example jobState('running', { holds: false, rolloutInFlight: true }) // 'resizing'
 * @example jobState('pending', { holds: false, rolloutInFlight: false }) // 'pending'
 */
export function jobState(phase: JobPhase, i: StateInputs): JobState {
  if (phase === 'done' || phase === 'failed') return phase;
  if (i.rolloutInFlight) return 'resizing';
  // Scheduled to run but nothing of it runs: between a rollout's end and the observation of its tasks.
  if (phase === 'running' && !i.holds) return 'resizing';
  return phase;
}
