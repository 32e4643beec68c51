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

describe("the runtime's backend port on Kubernetes", () => {
  it('admits only existing OptimusJobs, reports running shapes from status, finishes jobs whose workers exit 0', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 16, memory: 64 * GiB } }]);
    backend = startBackend(cluster);
    rt = new KubernetesRuntimeBackend(backend, { completionCheckMs: 20 });
    await backend.start();
    await until(() => backend.leader.isLeader());
    await cluster.submit({ name: 'j' });
    await until(() => backend.jobs.list().length === 1);
    await expect(rt.admit(spec('nope'))).rejects.toThrow('OptimusJob default/nope not found');
    await rt.admit(spec('j'));
    const placement = [
      { role: 'ps' as const, index: 0, server: 'n1' },
      { role: 'worker' as const, index: 0, server: 'n1' },
    ];
    await rt.executor.execute({
      actions: [{ kind: 'start', jobId: 'default/j', shape: { ps: 1, workers: 1 }, placement }],
    });
    await until(() => rt.running().has('default/j'));
    expect(rt.running().get('default/j')).toEqual({ shape: { ps: 1, workers: 1 }, placement });
    expect((await rt.servers()).map((s) => s.name)).toEqual(['n1']);
    const finished: string[] = [];
    rt.attach({ onJobFinished: (id, outcome) => finished.push(`${id}:${outcome}`) });
    cluster.fake.exit('default', 'j-worker-0', 0);
    await until(() => finished.length > 0);
    expect(finished).toEqual(['default/j:succeeded']);
    expect((await cluster.job('default', 'j')).status?.phase).toBe('Succeeded');
  });
});
