/**
 * Where the ingest delivers what sidecars say: records are stored and added to their job's
 * observations, statuses kept per task; either may ask for a round soon. Replaying the store
 * after a restart goes through the same path without storing again.
 */
import type { Logger } from 'pino';
import type { MetricsRecord, TaskStatus } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import type { StateStore, StoredRecord } from './backend';
import type { Clock } from './clock';
import { Ingest, type SinkOutcome } from './ingest';
import { LOST_SIDECAR_GRACE_MS, type JobEntry } from './job-entry';
import { isOwnRecord } from './job-record';
import { jobIdOf } from './job-spec';
import type { RuntimeMetrics } from './metrics';
import { convergedEnd, epochCompleted } from './reconcile';
import type { RoundKind } from './round';

/**
 * Job seconds from a record that asks for a round (a pre-run sample is complete, the convergence
 * rule holds) to that round: long enough that records arriving together cost one round, short
 * against any sample or scheduling interval.
 */
const RECORD_ROUND_DELAY_SEC = 2;

export interface TelemetrySinkOptions {
  readonly entries: ReadonlyMap<string, JobEntry>;
  readonly store: StateStore;
  /** Post-warm-up speed records per worker that end one pre-run sample. */
  readonly recordsPerWorker: number;
  readonly clock: () => Clock;
  readonly requestRound: (kind: RoundKind, delayMs: number) => void;
  readonly log: Logger;
}

export class TelemetrySink {
  private replaying = false;

  constructor(private readonly o: TelemetrySinkOptions) {}

  /**
   * Rebuilds observations and de-duplication from the store. Records of jobs no longer known, or
   * of an earlier job under the same name (another incarnation), are skipped. Returns how many.
   */
  replay(records: readonly StoredRecord[], ingest: Ingest): number {
    let stale = 0;
    this.replaying = true;
    try {
      for (const r of records) {
        const e = this.o.entries.get(`${r.task.namespace}/${r.task.job}`);
        if (e && isOwnRecord(e.rec, r)) ingest.replay(r.task, r.record);
        else stale += 1;
      }
    } finally {
      this.replaying = false;
    }
    return stale;
  }

  onRecord(task: TaskId, record: MetricsRecord): SinkOutcome {
    const e = this.o.entries.get(`${task.namespace}/${task.job}`);
    // Counted by the ingest (`unknown-job`), not stored: the sidecar keeps it and sends it again.
    if (!e) return 'unknown-job';
    const live = !this.replaying;
    const { incarnation } = e.rec;
    if (live) this.o.store.appendRecord({ task, record, ...(incarnation !== undefined && { incarnation }) });
    e.obs.add(task, record, e.rec.spans);
    if (!live) return 'stored';
    const soon = (RECORD_ROUND_DELAY_SEC * 1000) / this.o.clock().scale;
    if (e.rec.phase === 'pre-run' && e.current) {
      const target = e.obs.samplesNeeded(this.o.recordsPerWorker, e.current.shape.workers);
      if (e.obs.samplesInSpan(e.rec.spans.length - 1) >= target) this.o.requestRound('pre-run', soon);
    }
    // Done is the convergence rule on the logged loss: act on it soon, not at the next interval.
    if (epochCompleted(e) && convergedEnd(e, false)) this.o.requestRound('pre-run', soon);
    return 'stored';
  }

  /** A sidecar's retained status: kept per task (a `lost` worker is replaced after a grace). */
  onStatus(task: TaskId, status: TaskStatus): void {
    const e = this.o.entries.get(`${task.namespace}/${task.job}`);
    if (!e) return;
    const key = `${task.role}/${task.index}`;
    const before = e.sidecars.get(key);
    if (before && before.ts > status.ts) return; // an older retained message after a newer one
    e.sidecars.set(key, { state: status.state, ts: status.ts });
    if (status.state === 'lost' && before?.state !== 'lost') {
      this.o.log.warn({ job: jobIdOf(e.rec.spec), task: key }, 'a sidecar was lost (its Last Will)');
      this.o.requestRound('full', LOST_SIDECAR_GRACE_MS / this.o.clock().scale);
    }
  }
}

/** The controller's ingest: delivers into `sink`, counts every rejection by reason (and field) on `metrics`. */
export function countedIngest(sink: TelemetrySink, metrics: RuntimeMetrics, log: Logger): Ingest {
  return new Ingest(
    { onRecord: (t, r) => sink.onRecord(t, r), onStatus: (t, st) => sink.onStatus(t, st) },
    (reason, topic, detail, field) => {
      metrics.messagesRejected.inc({ reason });
      if (reason === 'out-of-range' && field) metrics.recordsOutOfRange.inc({ field });
      log.debug({ reason, topic, detail }, 'message rejected');
    },
    (err) => log.warn({ err }, 'a valid record could not be used'),
  );
}
