import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import { KubernetesRuntimeBackend } from '../../controller/src/k8s/runtime-backend';
import { parseJobSpec } from '../../controller/src/runtime/job-spec';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startBackend, until } from './backend-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster;
let backend: KubernetesBackend;
let rt: KubernetesRuntimeBackend;
afterEach(async () => {
  await rt.close();
  await backend.stop();
  await cluster.close();
});

const spec = (name: string) => {
  const r = parseJobSpec({
    name,
    batchSize: 64,
    stepsPerEpoch: 100,
    psDemand: { cpu: 1 },
    workerDemand: { cpu: 1 },
  });
  if (!r.ok) throw new Error(r.error);
  return r.spec;
};

const placement = [
  { role: 'ps' as const, index: 0, server: 'n1' },
  { role: 'worker' as const, index: 0, server: 'n1' },
];

async function setup(): Promise<void> {
  cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 16, memory: 64 * GiB } }], {
    namespaces: ['other'],
  });
  backend = startBackend(cluster);
  rt = new KubernetesRuntimeBackend(backend, { debounceMs: 20 });
  await backend.start();
  await until(() => backend.leader.isLeader());
  await cluster.submit({ name: 'j' });
  await until(() => backend.jobs.list().length === 1);
}

describe("the runtime's backend port on Kubernetes", () => {
  it('admits only existing OptimusJobs and observes their pods as tasks, from the informer caches', async () => {
    await setup();
    await expect(rt.admit(spec('nope'))).rejects.toThrow('OptimusJob default/nope not found');
    await rt.admit(spec('j'));
    expect((await rt.observe()).jobs.get('default/j')).toEqual({ tasks: [], exited: null, finished: null });
    const r = await rt.executor.execute({
      actions: [{ kind: 'start', jobId: 'default/j', shape: { ps: 1, workers: 1 }, placement }],
    });
    expect(r.failed).toEqual([]);
    const mark = cluster.double.requests.length;
    const o = await rt.observe();
    expect(o.servers.map((s) => s.name)).toEqual(['n1']);
    expect(o.jobs.get('default/j')?.tasks).toEqual(placement.map((p) => ({ ...p, state: 'running' })));
    // Observing reads the caches only: not one request to the API server.
    expect(cluster.double.requests.length).toBe(mark);
  });

  it('nudges the runtime on changes of our pods (debounced) and observes the program exit', async () => {
    await setup();
    await rt.executor.execute({
      actions: [{ kind: 'start', jobId: 'default/j', shape: { ps: 1, workers: 1 }, placement }],
    });
    let nudges = 0;
    rt.attach({ changed: () => (nudges += 1) });
    cluster.fake.exit('default', 'j-worker-0', 0);
    await until(() => nudges > 0);
    expect((await rt.observe()).jobs.get('default/j')).toMatchObject({
      exited: { outcome: 'succeeded', reason: 'WorkersSucceeded' },
      finished: null,
    });
    // The backend itself deletes nothing: ending the job is the runtime's decision.
    expect(cluster.pods('default')).toHaveLength(3);
    const r = await rt.executor.execute({
      actions: [
        {
          kind: 'finish',
          jobId: 'default/j',
          outcome: 'succeeded',
          reason: 'WorkersSucceeded',
          message: 'all 1 workers finished',
          checkpoint: false,
        },
      ],
    });
    expect(r.failed).toEqual([]);
    expect(cluster.pods('default')).toEqual([]);
    await until(async () => (await rt.observe()).jobs.get('default/j')?.finished !== null);
    expect((await rt.observe()).jobs.get('default/j')).toEqual({
      tasks: [],
      exited: null,
      finished: { outcome: 'succeeded', reason: 'WorkersSucceeded', message: 'all 1 workers finished' },
    });
  });

  it('a pod of another workload does not nudge the runtime', async () => {
    await setup();
    let nudges = 0;
    rt.attach({ changed: () => (nudges += 1) });
    await cluster.clients.core.createNamespacedPod({
      namespace: 'other',
      body: {
        metadata: { name: 'web' },
        spec: {
          nodeName: 'n1',
          containers: [{ name: 'w', image: 'nginx', resources: { requests: { cpu: '1' } } }],
        },
      },
    });
    // The informer has seen it (and its start): it holds a CPU of n1 in the cluster view.
    await until(() => backend.servers()[0]?.reserved['cpu'] === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(nudges).toBe(0);
  });
});
