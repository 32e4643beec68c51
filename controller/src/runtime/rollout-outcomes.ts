/**
 * What a settled rollout means for its job: applied actions become the job's confirmed intent, a
 * failure marks the job degraded and waits out a growing backoff before the job is dispatched again
 * (the next rounds re-plan it; the other jobs are not held back).
 */
import type { Logger } from 'pino';
import type { Clock } from './clock';
import type { Settled } from './dispatch';
import type { EventHub } from './events';
import type { JobEntry } from './job-entry';
import type { DegradedStage } from './job-record';
import { healJob } from './job-health';
import type { RuntimeMetrics } from './metrics';
import { RetryBackoff } from './retry-backoff';
import type { RoundKind } from './round';
import { confirmAction, describeAction } from './settle';

export interface RolloutOutcomesOptions {
  readonly metrics: RuntimeMetrics;
  readonly log: Logger;
  readonly events: EventHub;
  readonly clock: () => Clock;
  readonly entry: (id: string) => JobEntry | undefined;
  /** True once the controller stops: late outcomes change nothing then. */
  readonly stopped: () => boolean;
  readonly roundNo: () => number;
  readonly jobChanged: (e: JobEntry) => void;
  readonly degrade: (e: JobEntry, stage: DegradedStage, reason: string) => void;
  readonly requestRound: (kind: RoundKind, delayMs?: number) => void;
}

export class RolloutOutcomes {
  private readonly retries = new RetryBackoff();

  constructor(private readonly o: RolloutOutcomesOptions) {}

  /** False while the job waits out a failure backoff (a full round is asked for when it ends). */
  mayDispatch(id: string): boolean {
    const wait = this.retries.waitMs(id, this.o.clock().wallMs());
    if (wait > 0) this.o.requestRound('full', wait);
    return wait <= 0;
  }

  /** The job is gone: its backoff with it. */
  forget(id: string): void {
    this.retries.forget(id);
  }

  /** Confirm or forget: only applied actions change the job's intent. */
  settled(s: Settled): void {
    const { metrics } = this.o;
    for (const a of s.applied) metrics.planActions.inc({ kind: a.kind, result: 'applied' });
    for (const f of s.failed)
      metrics.planActions.inc({ kind: f.action.kind, result: s.timedOut ? 'timed-out' : 'failed' });
    const e = this.o.entry(s.jobId);
    if (!e || this.o.stopped()) return;
    const clock = this.o.clock();
    const t = { now: clock.now(), wallMs: clock.wallMs() };
    const fitted = e.models !== null && e.models.convergence.status === 'ok' && e.models.speedFitted;
    for (const a of s.applied) confirmAction(e, a, t, fitted);
    if (s.applied.some((a) => a.kind === 'finish')) e.wound = true;
    if (s.applied.length > 0) {
      this.o.events.emit({ type: 'decision', round: this.o.roundNo(), actions: s.applied, ts: t.wallMs });
      this.o.jobChanged(e);
    }
    if (s.failed.length === 0) {
      s.assumed.confirm?.();
      this.retries.forget(s.jobId);
      healJob(e, 'rollout');
      return;
    }
    const first = s.failed[0]!;
    const delay = this.retries.failed(s.jobId, t.wallMs);
    this.o.degrade(e, 'rollout', `${describeAction(first.action)}: ${first.error}`);
    this.o.log.warn({ job: s.jobId, failed: s.failed, timedOut: s.timedOut }, 'rollout failed; re-planning');
    this.o.requestRound('full', delay);
  }
}
