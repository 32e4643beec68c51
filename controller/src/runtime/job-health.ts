/**
 * A job's degraded mark: set by the stage of a round that failed for it (refit, plan, rollout), cleared
 * when that stage next succeeds. One bad job is marked and counted; the others go on.
 */
import type { Logger } from 'pino';
import type { JobEntry } from './job-entry';
import type { DegradedStage } from './job-record';
import { jobIdOf } from './job-spec';
import type { RuntimeMetrics } from './metrics';

export interface DegradeContext {
  readonly wallMs: number;
  readonly metrics: RuntimeMetrics;
  readonly log: Logger;
  /** Called when the mark changed (not when the same failure repeats). */
  readonly changed: (e: JobEntry) => void;
}

/** Marks the job degraded by `stage`; the time is kept while the same failure repeats. */
export function degradeJob(e: JobEntry, stage: DegradedStage, reason: string, ctx: DegradeContext): void {
  const { rec } = e;
  const same = rec.degraded?.stage === stage && rec.degraded.reason === reason;
  rec.degraded = same ? rec.degraded : { stage, reason, sinceMs: ctx.wallMs };
  ctx.metrics.jobErrors.inc({ stage });
  if (!same) {
    ctx.log.warn({ job: jobIdOf(rec.spec), stage, reason }, 'job degraded');
    ctx.changed(e);
  }
}

/** Clears a job's degraded mark when the stage that set it succeeded. */
export function healJob(e: JobEntry, stage: DegradedStage): void {
  if (e.rec.degraded?.stage === stage) e.rec.degraded = null;
}
