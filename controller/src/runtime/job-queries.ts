/**
 * Read-only answers about jobs (API, dashboard, metrics), as functions of the runtime's entries:
 * nothing here changes a job or reads the clock.
 */
import type { Core } from './core';
import { outsideLimits } from './fit-check';
import { entryState, type JobEntry } from './job-entry';
import { JOB_STATES, type JobState } from './job-state';
import { remainingTime, refitJob } from './refit';

/** Predicted remaining job seconds of a job at a shape (its current models, or a fit made now). */
export function whatIf(
  core: Core,
  id: string,
  e: JobEntry,
  ps: number,
  workers: number,
): Record<string, unknown> {
  const models = e.models ?? refitJob(core, e.rec, e.obs);
  const outside = outsideLimits(e.rec.spec, { ps, workers });
  return {
    id,
    shape: { ps, workers },
    withinLimits: outside === null,
    ...(outside !== null && { note: outside }),
    predictedRemainingSec: remainingTime(models, { ps, workers }),
    stepsPerSec: models.speed.predict(ps, workers),
    remainingSteps: models.remaining,
    fitted: models.speedFitted && models.convergence.status === 'ok',
  };
}

/** Jobs per state (every state present, zeros included); `inFlight` says which jobs are mid-rollout. */
export function stateCounts(
  entries: Iterable<JobEntry>,
  inFlight: (id: string) => boolean,
): Record<JobState, number> {
  const counts = Object.fromEntries(JOB_STATES.map((p) => [p, 0])) as Record<JobState, number>;
  for (const e of entries) counts[entryState(e, inFlight(`${e.rec.spec.namespace}/${e.rec.spec.name}`))] += 1;
  return counts;
}

/** Degraded jobs per stage that degraded them. */
export function degradedCounts(entries: Iterable<JobEntry>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries)
    if (e.rec.degraded) out[e.rec.degraded.stage] = (out[e.rec.degraded.stage] ?? 0) + 1;
  return out;
}
