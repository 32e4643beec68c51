/**
 * The jobs to schedule, from an informer on OptimusJobs: each with its parsed spec (or the
 * reason it is invalid) and what its status says runs — which is how a restarted controller
 * resumes: the status holds shape, placement and restarts.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import type { KubeClients } from '../api/clients';
import type { OptimusJob, OptimusJobSpec } from '../api/optimus-job';
import { jobIdOfResource, parseSpec } from '../api/optimus-job';
import { GROUP, PLURAL, VERSION } from '../api/names';
import { WatchedList } from '../api/watched-list';

export type JobEntry =
  | { readonly id: string; readonly job: OptimusJob; readonly valid: true; readonly spec: OptimusJobSpec }
  | { readonly id: string; readonly job: OptimusJob; readonly valid: false; readonly error: string };

const FINISHED = new Set(['Succeeded', 'Failed']);

/** What the status says runs, or null when the job holds nothing. */
export function currentOf(job: OptimusJob): { shape: JobShape; placement: readonly TaskPlacement[] } | null {
  const s = job.status;
  if (!s?.shape || !s.placement?.length || s.phase === 'Suspended' || FINISHED.has(s.phase ?? ''))
    return null;
  return { shape: s.shape, placement: s.placement };
}

export const isFinished = (job: OptimusJob): boolean => FINISHED.has(job.status?.phase ?? '');

export class JobSource {
  private readonly watched: WatchedList<KubernetesObject>;

  constructor(clients: KubeClients, opts: { namespace?: string; onError?: (err: unknown) => void } = {}) {
    const base = { group: GROUP, version: VERSION, plural: PLURAL };
    const ns = opts.namespace;
    this.watched = new WatchedList({
      config: clients.config,
      path: ns
        ? `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}`
        : `/apis/${GROUP}/${VERSION}/${PLURAL}`,
      list: async () =>
        (ns
          ? await clients.custom.listNamespacedCustomObject({ ...base, namespace: ns })
          : await clients.custom.listClusterCustomObject(base)) as KubernetesListObject<KubernetesObject>,
      ...(opts.onError ? { onError: opts.onError } : {}),
    });
  }

  start(): Promise<void> {
    return this.watched.start();
  }

  stop(): Promise<void> {
    return this.watched.stop();
  }

  /** Every OptimusJob as the informer holds it (unparsed, unsorted). */
  items(): readonly OptimusJob[] {
    return this.watched.items() as unknown as OptimusJob[];
  }

  /** Every job (finished ones included), sorted by id. */
  list(): JobEntry[] {
    return (this.watched.items() as unknown as OptimusJob[])
      .map((job): JobEntry => {
        const parsed = parseSpec(job.spec);
        const id = jobIdOfResource(job);
        return parsed.ok
          ? { id, job, valid: true, spec: parsed.spec }
          : { id, job, valid: false, error: parsed.error };
      })
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Jobs the scheduler should consider: valid and not finished. */
  active(): Extract<JobEntry, { valid: true }>[] {
    return this.list().filter((e): e is Extract<JobEntry, { valid: true }> => e.valid && !isFinished(e.job));
  }

  onChange(fn: () => void): () => void {
    return this.watched.onChange(fn);
  }
}
