/** Builders for the cluster-store tests: runtime job records and metrics records of a cluster job. */
import type { KubernetesBackend } from '../../controller/src/k8s';
import { ClusterStore } from '../../controller/src/k8s/store/cluster-store';
import type { ClusterStoreOptions } from '../../controller/src/k8s/store/cluster-store';
import { toJobSpecInput } from '../../controller/src/k8s/runtime-backend';
import type { StoredRecord } from '../../controller/src/runtime/backend';
import type { JobRecord } from '../../controller/src/runtime/job-record';
import { newJobRecord } from '../../controller/src/runtime/job-record';
import { parseJobSpec } from '../../controller/src/runtime/job-spec';
import type { MetricsRecord } from '../../shared/src/schemas';

/** A cluster store over the backend's informer, flushed only when the test says so. */
export function storeOf(backend: KubernetesBackend, extra: Partial<ClusterStoreOptions> = {}): ClusterStore {
  return new ClusterStore({
    clients: backend.clients,
    jobs: () => backend.jobs.list(),
    isLeader: () => backend.leader.isLeader(),
    flushMs: 60_000,
    ...extra,
  });
}

/** The runtime's record of an OptimusJob the backend's informer holds. */
export function jobRecordOf(backend: KubernetesBackend, id: string, now = 0): JobRecord {
  const entry = backend.jobs.active().find((e) => e.id === id);
  if (!entry) throw new Error(`no active OptimusJob ${id}`);
  const parsed = parseJobSpec(toJobSpecInput(entry));
  if (!parsed.ok) throw new Error(parsed.error);
  return newJobRecord(parsed.spec, now);
}

export interface RecordInput {
  readonly job: string;
  readonly role?: 'ps' | 'worker';
  readonly index?: number;
  readonly seq: number;
  readonly kind?: MetricsRecord['kind'];
  readonly epoch?: number;
  readonly ts?: number;
}

export function storedRecord(r: RecordInput): StoredRecord {
  const kind = r.kind ?? 'batch';
  return {
    task: { namespace: 'default', job: r.job, role: r.role ?? 'worker', index: r.index ?? 0 },
    record: {
      v: 1,
      seq: r.seq,
      ts: r.ts ?? 1_700_000_000_000 + r.seq,
      framework: 'mxnet',
      kind,
      epoch: r.epoch ?? 0,
      batch: kind === 'batch' ? r.seq % 100 : null,
      samplesPerSec: kind === 'batch' ? 64 : null,
      stepTime: null,
      loss: 1 / (1 + r.seq),
      lossName: 'cross-entropy',
      metrics: {},
    },
  };
}
