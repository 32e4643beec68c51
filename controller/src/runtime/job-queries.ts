/**
 * Read-only answers about jobs (API, dashboard, metrics), as functions of the runtime's entries:
 * nothing here changes a job or reads the clock.
 */
import type { Core } from './core';
import { outsideLimits } from './fit-check';
import { entryState, type JobEntry } from './job-entry';
import { JOB_STATES, type JobState } from './job-state';
import { roundSec } from './clock';
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
    predictedRemainingSec: rounded(remainingTime(models, { ps, workers }), roundSec),
    stepsPerSec: rounded(models.speed.predict(ps, workers), significant),
    remainingSteps: rounded(models.remaining, Math.round),
    fitted: models.speedFitted && models.convergence.status === 'ok',
  };
}

/** Four significant digits: a speed's model is not better than that, and JSON shows no float noise. */
const significant = (x: number): number => (Number.isFinite(x) ? +x.toPrecision(4) : x);

/** Every number of a flat object rounded by `round` (the what-if is read by people, as on the dashboard). */
function rounded<T extends object | null>(o: T, round: (x: number) => number): T {
  if (o === null) return o;
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v]),
  ) as T;
}

/** Jobs per state (every state present, zeros included; a job mid-rollout is `resizing`). */
export function stateCounts(entries: Iterable<JobEntry>): Record<JobState, number> {
  const counts = Object.fromEntries(JOB_STATES.map((p) => [p, 0])) as Record<JobState, number>;
  for (const e of entries) counts[entryState(e)] += 1;
  return counts;
}

/** Degraded jobs per stage that degraded them. */
export function degradedCounts(entries: Iterable<JobEntry>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries)
    if (e.rec.degraded) out[e.rec.degraded.stage] = (out[e.rec.degraded.stage] ?? 0) + 1;
  return out;
}
