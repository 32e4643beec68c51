/**
 * "In flight" (ADR 0035) in one place: a job is in flight while its target has not been reached —
 * observed ≠ target since the round wrote it. Both halves survive a crash (the target is durable,
 * the observation is read anew), so a restarted controller sees the same rollouts in flight.
 * Once reached, a target stays reached: a later divergence (an evicted pod) is not a rollout; the
 * round re-plans the job from what it observes.
 */
import type { JobPhase } from '../job-record';
import type { JobTarget } from './target';

export const isInFlight = (e: { readonly rec: { readonly target: JobTarget | null } }): boolean =>
  e.rec.target !== null && e.rec.target.reachedAtMs === undefined;

/** The phases the API shows: the record's, and `resizing` for a job mid-rollout. */
export type ApiPhase = JobPhase | 'resizing';

/**
 * The phase to show for a job: `resizing` while a rollout of it is in flight (never `waiting` or
 * `pending` for a job that is being started, stopped or resized), else its record's phase. A job
 * that is over stays over while its leftovers are stopped.
 */
export function apiPhase(phase: JobPhase, inFlight: boolean): ApiPhase {
  if (phase === 'done' || phase === 'failed') return phase;
  return inFlight ? 'resizing' : phase;
}
