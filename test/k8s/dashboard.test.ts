/** In Kubernetes mode the leader serves the dashboard and its data routes, from the cluster's view. */
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterView } from '../../controller/src/dashboard/cluster-view';
import type { Overview } from '../../controller/src/dashboard/job-rows';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import { startRun, until } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
});

describe('dashboard in Kubernetes mode', () => {
  it('shows the OptimusJob, its pods on the nodes, and the page', async () => {
    cluster = await startTestCluster([
      { name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } },
      { name: 'n2', capacity: { cpu: 32, memory: 128 * GiB } },
    ]);
    broker = await startEmbeddedBroker(0);
    run = await startRun(cluster, broker.url);
    await cluster.submit({ name: 'cifar' });
    const get = async <T>(path: string) => (await fetch(`${run!.httpUrl}${path}`)).json() as Promise<T>;
    await until(
      async () => (await get<Overview>('/api/v1/overview')).jobs.some((j) => j.shape !== null),
      15_000,
    );
    const o = await get<Overview>('/api/v1/overview');
    expect(o.timeScale).toBe(1);
    expect(o.jobs.map((j) => j.id)).toEqual(['default/cifar']);
    const c = await get<ClusterView>('/api/v1/cluster');
    expect(c.servers.map((s) => s.name).sort()).toEqual(['n1', 'n2']);
    const tasks = c.servers.flatMap((s) => s.tasks.filter((t) => t.job === 'default/cifar'));
    const shape = o.jobs[0]!.shape!;
    expect(tasks).toHaveLength(shape.ps + shape.workers);
    const page = await fetch(`${run.httpUrl}/dashboard/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="app.js"></script>');
  }, 30_000);
});
