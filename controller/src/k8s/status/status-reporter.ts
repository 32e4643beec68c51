/**
 * What the runtime writes into a job's status besides the rollout: progress, predicted
 * completion, the Kubeflow-shaped `trainerStatus` and ETA of the printer columns, and the fitted
 * models (bounded, so a status never grows without limit). The
 * runtime's reports reach it through {@link ProgressPublisher}; the observations a restarted
 * controller refits from live in the job's ConfigMap (see `cluster-store.ts`).
 */
import type { JobApi, StatusChange } from '../api/job-api';
import { replacingPatch } from '../api/job-api';
import { splitJobId } from '../api/names';
import type { OptimusJob } from '../api/optimus-job';
import { rfc3339, trainerStatusOf } from './trainer-status';

/** Status `models` larger than this (JSON bytes) are replaced by a note: etcd objects are ≤ 1.5 MiB. */
export const MAX_MODELS_BYTES = 16 * 1024;

export interface ProgressReport {
  /** Fraction of the predicted total steps done, 0..1. */
  readonly progress?: number;
  /** Epoch seconds of the predicted completion; null removes a stale one. */
  readonly predictedCompletionSec?: number | null;
  /** Replaces the stored models entirely: keys not reported any more are removed. */
  readonly models?: Readonly<Record<string, unknown>>;
  /** The job ended successfully (100 %, nothing left). */
  readonly finished?: boolean;
}

const idOf = (jobId: string) => {
  const id = splitJobId(jobId);
  if (!id) throw new Error(`job id "${jobId}" is not namespace/name`);
  return id;
};

export class StatusReporter {
  constructor(
    private readonly jobs: JobApi,
    /** The clock of `lastUpdatedTime` and `estimatedRemainingSeconds` (this is the I/O edge). */
    private readonly now: () => number = Date.now,
  ) {}

  async report(jobId: string, r: ProgressReport): Promise<void> {
    const { namespace, name } = idOf(jobId);
    const models =
      r.models && JSON.stringify(r.models).length > MAX_MODELS_BYTES
        ? { note: `models larger than ${MAX_MODELS_BYTES} bytes omitted` }
        : r.models;
    const nowMs = this.now();
    await this.jobs.updateStatus(namespace, name, (job) => {
      // What the report leaves out is kept in the status: the ETA is recomputed from it as of now.
      const stored = job.status;
      const predicted =
        r.predictedCompletionSec !== undefined
          ? r.predictedCompletionSec
          : stored?.predictedCompletionTime
            ? Date.parse(stored.predictedCompletionTime) / 1000
            : null;
      const percent = stored?.trainerStatus?.progressPercentage;
      const progress = r.progress ?? (percent !== undefined ? percent / 100 : undefined);
      const { trainerStatus, eta } = trainerStatusOf({
        ...(progress !== undefined ? { progress } : {}),
        predictedCompletionSec: predicted,
        ...(r.finished !== undefined ? { finished: r.finished } : {}),
        nowMs,
      });
      return {
        trainerStatus: replacingPatch(stored?.trainerStatus as Record<string, unknown> | undefined, {
          ...trainerStatus,
        }),
        eta,
        ...this.columns(r, models, job),
      };
    });
  }

  private columns(
    r: ProgressReport,
    models: Readonly<Record<string, unknown>> | undefined,
    job: OptimusJob,
  ): StatusChange {
    return {
      ...(r.progress !== undefined
        ? { progress: `${Math.round(Math.min(1, Math.max(0, r.progress)) * 100)}%` }
        : {}),
      ...(r.predictedCompletionSec === null
        ? { predictedCompletionTime: null }
        : r.predictedCompletionSec !== undefined
          ? { predictedCompletionTime: rfc3339(r.predictedCompletionSec * 1000) }
          : {}),
      ...(models ? { models: replacingPatch(job.status?.models, models) } : {}),
    };
  }
}
