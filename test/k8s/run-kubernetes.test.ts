import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startRun, until } from './backend-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
});

describe('optimus kubernetes run (composition root) against the API double', () => {
  it('leads, picks up an OptimusJob, and the runtime rolls its pods out through the executor', async () => {
    cluster = await startTestCluster([
      { name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } },
      { name: 'n2', capacity: { cpu: 32, memory: 128 * GiB } },
    ]);
    broker = await startEmbeddedBroker(0);
    run = await startRun(cluster, broker.url);
    expect(run.backend.leader.isLeader()).toBe(true);
    await cluster.submit({ name: 'cifar' });
    await until(() => cluster!.pods('default').some((p) => p.status?.phase === 'Running'), 15_000);
    await until(
      async () => ((await cluster!.job('default', 'cifar')).status?.phase ?? '') === 'Running',
      5000,
    );
    const status = (await cluster.job('default', 'cifar')).status!;
    const pods = cluster
      .pods('default')
      .filter((p) => p.metadata?.labels?.['optimus.dev/job'] === 'cifar' && !p.metadata.deletionTimestamp);
    expect(pods).toHaveLength(1 + status.shape!.ps + status.shape!.workers);
    expect(status.placement).toHaveLength(status.shape!.ps + status.shape!.workers);
  });
});
