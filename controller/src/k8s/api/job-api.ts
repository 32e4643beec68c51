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

type Json = unknown;
const isMap = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The merge patch that turns the map `stored` (as last read) into exactly `next`. A JSON merge
 * patch merges maps, so a key of `stored` that `next` lacks — at any depth — would stay forever;
 * here it is sent as `null`, which removes it. Lists and scalars replace as they are. Sound with
 * {@link JobApi.updateStatus}: the patch carries the read resourceVersion, so a write in between
 * means a re-read and a new diff. (A `null` inside `next` also removes: merge patch cannot store one.)
 */
export function replacingPatch(
  stored: Readonly<Record<string, Json>> | undefined,
  next: Readonly<Record<string, Json>>,
): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const k of Object.keys(stored ?? {})) if (!(k in next)) out[k] = null;
  for (const [k, v] of Object.entries(next)) {
    const old = stored?.[k];
    out[k] = isMap(v) && isMap(old) ? replacingPatch(old, v) : v;
  }
  return out;
}

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
