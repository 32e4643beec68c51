/**
 * The runtime's per-round job reports → OptimusJob status (progress, predicted completion, models),
 * through {@link StatusReporter}. Rate limits by construction: reports are coalesced per job (only
 * the newest waits), written one at a time in the background, and a job's status is written only
 * when what the printer columns show changed — the progress in whole percent, the predicted
 * completion to the minute, the phase, or the kind of fit. The models, `trainerStatus` and its
 * `lastUpdatedTime` ride along with such a write, so they are never older than the columns (the
 * ETA is as of `lastUpdatedTime`: it stands still between writes, at most a minute of prediction).
 */
import type { JobReport } from '../../runtime/backend';
import { JobNotFoundError } from '../api/job-api';
import type { ProgressReport } from './status-reporter';

/** Where the writes go (the {@link StatusReporter} in production, a recorder in tests). */
export interface ProgressSink {
  report(jobId: string, r: ProgressReport): Promise<void>;
}

export interface ProgressPublisherOptions {
  readonly onError?: (err: unknown, jobId: string) => void;
}

/** What the columns show; a write happens only when this changes. */
export function changeKey(r: JobReport): string {
  const conv = (r.models?.['convergence'] as { status?: unknown } | undefined)?.status ?? 'none';
  return JSON.stringify([
    r.phase,
    r.progress === null ? null : Math.round(r.progress * 100),
    r.predictedCompletionMs === null ? null : Math.round(r.predictedCompletionMs / 60_000),
    conv,
    r.models?.['speedFitted'] ?? null,
  ]);
}

/** A report as status fields; a finished job's stale prediction is removed. */
export function toProgressReport(r: JobReport): ProgressReport {
  const finished = r.phase === 'done' || r.phase === 'failed';
  return {
    ...(r.progress !== null ? { progress: r.progress } : {}),
    ...(r.predictedCompletionMs !== null && !finished
      ? { predictedCompletionSec: Math.round(r.predictedCompletionMs / 1000) }
      : finished
        ? { predictedCompletionSec: null }
        : {}),
    ...(r.models ? { models: r.models } : {}),
    ...(r.phase === 'done' ? { finished: true } : {}),
  };
}

export class ProgressPublisher {
  private readonly pending = new Map<string, JobReport>();
  private readonly written = new Map<string, string>();
  private draining: Promise<void> | null = null;
  /** Status writes made (for tests and metrics). */
  writes = 0;

  constructor(
    private readonly sink: ProgressSink,
    private readonly o: ProgressPublisherOptions = {},
  ) {}

  /** Queues the newest report of every job; returns at once. */
  push(reports: readonly JobReport[]): void {
    const present = new Set(reports.map((r) => r.jobId));
    for (const id of this.written.keys()) if (!present.has(id)) this.written.delete(id);
    for (const r of reports) this.pending.set(r.jobId, r);
    this.kick();
  }

  /** Resolves when every queued report has been written (or skipped). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private kick(): void {
    if (this.draining || this.pending.size === 0) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      this.kick(); // reports pushed while the last write was finishing
    });
  }

  private async drain(): Promise<void> {
    for (const [id, r] of this.pending) {
      this.pending.delete(id);
      const key = changeKey(r);
      if (this.written.get(id) === key) continue;
      try {
        await this.sink.report(id, toProgressReport(r));
        this.writes += 1;
        this.written.set(id, key);
      } catch (err) {
        // A job deleted since the round has no status to write; anything else is worth a warning.
        if (!(err instanceof JobNotFoundError)) this.o.onError?.(err, id);
      }
    }
  }
}
