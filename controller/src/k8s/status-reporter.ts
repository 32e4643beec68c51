/**
 * What the runtime writes into a job's status besides the rollout: progress, predicted
 * completion and the fitted models (bounded, so a status never grows without limit). The
 * runtime's reports reach it through {@link ProgressPublisher}; the observations a restarted
 * controller refits from live in the job's ConfigMap (see `cluster-store.ts`).
 */
import type { JobApi } from './job-api';
import { replacingPatch } from './job-api';
import { splitJobId } from './names';

/** Status `models` larger than this (JSON bytes) are replaced by a note: etcd objects are ≤ 1.5 MiB. */
export const MAX_MODELS_BYTES = 16 * 1024;

export interface ProgressReport {
  /** Fraction of the predicted total steps done, 0..1. */
  readonly progress?: number;
  /** Epoch seconds of the predicted completion; null removes a stale one. */
  readonly predictedCompletionSec?: number | null;
  /** Replaces the stored models entirely: keys not reported any more are removed. */
  readonly models?: Readonly<Record<string, unknown>>;
}

const idOf = (jobId: string) => {
  const id = splitJobId(jobId);
  if (!id) throw new Error(`job id "${jobId}" is not namespace/name`);
  return id;
};

export class StatusReporter {
  constructor(private readonly jobs: JobApi) {}

  async report(jobId: string, r: ProgressReport): Promise<void> {
    const { namespace, name } = idOf(jobId);
    const models =
      r.models && JSON.stringify(r.models).length > MAX_MODELS_BYTES
        ? { note: `models larger than ${MAX_MODELS_BYTES} bytes omitted` }
        : r.models;
    await this.jobs.updateStatus(namespace, name, (job) => ({
      ...(r.progress !== undefined
        ? { progress: `${Math.round(Math.min(1, Math.max(0, r.progress)) * 100)}%` }
        : {}),
      ...(r.predictedCompletionSec === null
        ? { predictedCompletionTime: null }
        : r.predictedCompletionSec !== undefined
          ? {
              predictedCompletionTime: new Date(r.predictedCompletionSec * 1000)
                .toISOString()
                .replace(/\.\d+Z$/, 'Z'),
            }
          : {}),
      ...(models ? { models: replacingPatch(job.status?.models, models) } : {}),
    }));
  }
}
