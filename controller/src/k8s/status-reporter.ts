/**
 * What the runtime writes into a job's status besides the rollout: progress, predicted
 * completion and the fitted models (bounded, so a status never grows without limit), plus the
 * observations ConfigMap that lets a restarted controller refit without waiting for new samples.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { KubeClients } from './clients';
import { statusCodeOf } from './clients';
import type { JobApi } from './job-api';
import { splitJobId } from './names';
import { ownerReferenceOf } from './pod-builder';

/** Status `models` larger than this (JSON bytes) are replaced by a note: etcd objects are ≤ 1.5 MiB. */
export const MAX_MODELS_BYTES = 16 * 1024;
/** Observations kept per job in its ConfigMap (oldest dropped first). */
export const MAX_OBSERVATIONS_BYTES = 512 * 1024;

export interface ProgressReport {
  /** Fraction of the predicted total steps done, 0..1. */
  readonly progress?: number;
  /** Epoch seconds of the predicted completion. */
  readonly predictedCompletionSec?: number;
  readonly models?: Readonly<Record<string, unknown>>;
}

const idOf = (jobId: string) => {
  const id = splitJobId(jobId);
  if (!id) throw new Error(`job id "${jobId}" is not namespace/name`);
  return id;
};

export class StatusReporter {
  constructor(
    private readonly clients: KubeClients,
    private readonly jobs: JobApi,
  ) {}

  async report(jobId: string, r: ProgressReport): Promise<void> {
    const { namespace, name } = idOf(jobId);
    const models =
      r.models && JSON.stringify(r.models).length > MAX_MODELS_BYTES
        ? { note: `models larger than ${MAX_MODELS_BYTES} bytes omitted` }
        : r.models;
    await this.jobs.updateStatus(namespace, name, () => ({
      ...(r.progress !== undefined
        ? { progress: `${Math.round(Math.min(1, Math.max(0, r.progress)) * 100)}%` }
        : {}),
      ...(r.predictedCompletionSec !== undefined
        ? {
            predictedCompletionTime: new Date(r.predictedCompletionSec * 1000)
              .toISOString()
              .replace(/\.\d+Z$/, 'Z'),
          }
        : {}),
      ...(models ? { models } : {}),
    }));
  }

  /** Saves the newest observations that fit in {@link MAX_OBSERVATIONS_BYTES} into `<job>-observations`. */
  async saveObservations(jobId: string, observations: readonly unknown[]): Promise<number> {
    const { namespace, name } = idOf(jobId);
    const kept = [...observations];
    while (kept.length > 0 && JSON.stringify(kept).length > MAX_OBSERVATIONS_BYTES) kept.shift();
    const job = await this.jobs.get(namespace, name);
    const cmName = `${name}-observations`;
    const body: V1ConfigMap = {
      metadata: { name: cmName, namespace, ownerReferences: [ownerReferenceOf(job)] },
      data: { 'observations.json': JSON.stringify(kept) },
    };
    try {
      await this.clients.core.replaceNamespacedConfigMap({ namespace, name: cmName, body });
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
      await this.clients.core.createNamespacedConfigMap({ namespace, body });
      await this.jobs.updateStatus(namespace, name, () => ({ observationsConfigMap: cmName }));
    }
    return kept.length;
  }

  /** The saved observations of a job ([] when none). */
  async loadObservations(jobId: string): Promise<unknown[]> {
    const { namespace, name } = idOf(jobId);
    try {
      const cm = await this.clients.core.readNamespacedConfigMap({ namespace, name: `${name}-observations` });
      return parseArray(cm.data?.['observations.json']);
    } catch (err) {
      if (statusCodeOf(err) === 404) return [];
      throw err;
    }
  }
}

/** A corrupt ConfigMap (edited by hand) yields no observations rather than a crash. */
function parseArray(text: string | undefined): unknown[] {
  try {
    const v = JSON.parse(text ?? '[]') as unknown;
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}
