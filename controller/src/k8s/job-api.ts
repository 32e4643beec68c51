/**
 * Reads of OptimusJobs and writes of their status (the `/status` subresource, merge patch with the
 * read resourceVersion, so a concurrent writer makes us re-read instead of clobbering).
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeClients } from './clients';
import { statusCodeOf } from './clients';
import type { OptimusJob, OptimusJobStatus } from './optimus-job';
import { GROUP, PLURAL, VERSION } from './names';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const where = (namespace: string) => ({ group: GROUP, version: VERSION, namespace, plural: PLURAL });

export class JobNotFoundError extends Error {
  constructor(readonly jobId: string) {
    super(`OptimusJob ${jobId} not found`);
  }
}

/** A status change: fields to set; `null` removes a field (JSON merge patch semantics). */
export type StatusChange = { readonly [K in keyof OptimusJobStatus]?: OptimusJobStatus[K] | null };

export class JobApi {
  constructor(private readonly clients: KubeClients) {}

  async get(namespace: string, name: string): Promise<OptimusJob> {
    try {
      return (await this.clients.custom.getNamespacedCustomObject({
        ...where(namespace),
        name,
      })) as OptimusJob;
    } catch (err) {
      if (statusCodeOf(err) === 404) throw new JobNotFoundError(`${namespace}/${name}`);
      throw err;
    }
  }

  /**
   * Read-modify-write of the status: `change` sees the latest object; a 409 (someone wrote in
   * between) re-reads and retries, up to `attempts` times.
   */
  async updateStatus(
    namespace: string,
    name: string,
    change: (job: OptimusJob) => StatusChange,
    attempts = 4,
  ): Promise<OptimusJob> {
    for (let i = 1; ; i++) {
      const job = await this.get(namespace, name);
      const body = {
        metadata: { resourceVersion: job.metadata.resourceVersion },
        status: { ...change(job), observedGeneration: job.metadata.generation },
      };
      try {
        return (await this.clients.custom.patchNamespacedCustomObjectStatus(
          { ...where(namespace), name, body },
          MERGE,
        )) as OptimusJob;
      } catch (err) {
        if (statusCodeOf(err) !== 409 || i >= attempts) throw err;
      }
    }
  }
}
