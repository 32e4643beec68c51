/**
 * A test cluster: the API double with the OptimusJob CRD installed, nodes, a fake
 * scheduler/kubelet, and helpers to submit jobs and read what runs.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { crdManifest } from '../../controller/src/k8s/api/crd';
import { makeClients } from '../../controller/src/k8s/api/clients';
import type { KubeClients } from '../../controller/src/k8s/api/clients';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import type { OptimusJob } from '../../controller/src/k8s/api/optimus-job';
import { FakeCluster } from '../k8s-api-double/fake-cluster';
import type { FakeClusterOptions, NodeOptions } from '../k8s-api-double/fake-cluster';
import type { ApiDouble } from '../k8s-api-double/server';
import { startApiDouble } from '../k8s-api-double/server';
import { formatQuantity } from '../../controller/src/k8s/api/quantity';
import type { Resources } from '../../shared/src/units';
import { API_VERSION, VERSION } from '../../controller/src/k8s/api/names';
import { podTemplate } from '../../controller/src/k8s/testing';

export interface TestCluster {
  readonly double: ApiDouble;
  readonly fake: FakeCluster;
  readonly clients: KubeClients;
  submit(job: JobInput): Promise<OptimusJob>;
  job(namespace: string, name: string): Promise<OptimusJob>;
  pods(namespace?: string): V1Pod[];
  close(): Promise<void>;
}

export interface JobInput {
  readonly namespace?: string;
  readonly name: string;
  readonly mode?: 'sync' | 'async';
  readonly image?: string;
  readonly psDemand?: Resources;
  readonly workerDemand?: Resources;
  readonly gracePeriodSeconds?: number;
  /** Extra pod-spec fields per role (nodeSelector, tolerations, affinity, …), merged into the template. */
  readonly podSpec?: { readonly ps?: Record<string, unknown>; readonly worker?: Record<string, unknown> };
}

const requests = (r: Resources): Record<string, string> =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, formatQuantity(k, v)]));

const template = (image: string, demand: Resources, extra: Record<string, unknown> = {}) => {
  const t = podTemplate({ image, args: ['--kv-store', 'dist_sync'], requests: requests(demand) });
  return { ...t, spec: { ...t.spec, ...extra } };
};

export const jobManifest = (j: JobInput) => ({
  apiVersion: API_VERSION,
  kind: 'OptimusJob',
  metadata: { name: j.name, namespace: j.namespace ?? 'default' },
  spec: {
    mode: j.mode ?? 'sync',
    replicaSpecs: {
      PS: {
        template: template(
          j.image ?? 'mxnet/python:1.9.1',
          j.psDemand ?? { cpu: 1, memory: 2 * 1024 ** 3 },
          j.podSpec?.ps,
        ),
      },
      Worker: {
        template: template(
          j.image ?? 'mxnet/python:1.9.1',
          j.workerDemand ?? { cpu: 1, memory: 2 * 1024 ** 3 },
          j.podSpec?.worker,
        ),
      },
    },
    batchSize: 64,
    convergence: { threshold: 0.02, patience: 3, stepsPerEpoch: 500 },
    scaling: { minPs: 1, maxPs: 8, minWorkers: 1, maxWorkers: 8 },
    checkpoint: { claimName: 'ckpt', mountPath: '/ckpt', gracePeriodSeconds: j.gracePeriodSeconds ?? 30 },
  },
});

export interface NodeSpec extends NodeOptions {
  readonly name: string;
  readonly capacity: Resources;
}

export async function startTestCluster(
  nodes: readonly NodeSpec[],
  opts: FakeClusterOptions & {
    gitVersion?: string;
    namespaces?: readonly string[];
    /** Tokens the API server authorizes with the RBAC objects stored in it (token → `ns/sa`). */
    rbac?: ReadonlyMap<string, string>;
  } = {},
): Promise<TestCluster> {
  const double = await startApiDouble({
    ...(opts.gitVersion ? { gitVersion: opts.gitVersion } : {}),
    bookmarkIntervalMs: 200,
    // Watches end at random, as a real API server's request timeout ends them: every test here
    // also exercises the informers' re-watch (and, after compaction, re-list) path.
    watchLifetime: { minMs: 300, maxMs: 1500 },
    // A short history, as after an etcd compaction: a watch that resumes after many writes gets 410
    // Gone and its informer must re-list.
    historyLimit: 200,
    namespaces: ['optimus-system', ...(opts.namespaces ?? [])],
    ...(opts.rbac ? { rbac: opts.rbac } : {}),
  });
  double.api.create(
    double.api.resolve('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!,
    undefined,
    crdManifest(),
  );
  const fake = new FakeCluster(double.api, opts);
  for (const n of nodes) fake.addNode(n.name, requests(n.capacity), n);
  const clients = makeClients(kubeConfigFor(double.url));
  const custom = clients.custom;
  return {
    double,
    fake,
    clients,
    submit: async (j) =>
      (await custom.createNamespacedCustomObject({
        group: 'optimus.dev',
        version: VERSION,
        namespace: j.namespace ?? 'default',
        plural: 'optimusjobs',
        body: jobManifest(j),
      })) as OptimusJob,
    job: async (namespace, name) =>
      (await custom.getNamespacedCustomObject({
        group: 'optimus.dev',
        version: VERSION,
        namespace,
        plural: 'optimusjobs',
        name,
      })) as OptimusJob,
    pods: (namespace) => fake.pods(namespace) as unknown as V1Pod[],
    close: async () => {
      fake.close();
      await double.close();
    },
  };
}
