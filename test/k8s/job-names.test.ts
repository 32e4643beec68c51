/**
 * A job whose name cannot work (too long for its pod names) on a cluster that did not refuse it
 * (no CEL, or created before the CRD's rule): the controller fails it with the reason and
 * creates nothing, while a job at the length limit runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_JOB_NAME_LENGTH } from '../../controller/src/k8s/api/names';
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

const named = (prefix: string, length: number) => `${prefix}-`.padEnd(length, 'x');

describe('job names against the API double', () => {
  it('fails a too-long job with an Invalid condition and no pods; runs one at the limit', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 64, memory: 256 * GiB } }]);
    broker = await startEmbeddedBroker(0);
    run = await startRun(cluster, broker.url);
    const tooLong = named('long', MAX_JOB_NAME_LENGTH + 1);
    const atLimit = named('fits', MAX_JOB_NAME_LENGTH);
    // The double, like an API server without the CEL rule, accepts both.
    await cluster.submit({ name: tooLong });
    await cluster.submit({ name: atLimit });

    const podsOf = (job: string) =>
      cluster!.pods('default').filter((p) => p.metadata?.labels?.['optimus.dev/job'] === job);
    await until(() => podsOf(atLimit).some((p) => p.status?.phase === 'Running'), 15_000);
    await until(async () => (await cluster!.job('default', tooLong)).status?.phase === 'Failed', 5000);

    const status = (await cluster.job('default', tooLong)).status!;
    expect(status.conditions).toEqual([
      expect.objectContaining({
        type: 'Invalid',
        status: 'True',
        reason: 'InvalidName',
        message: expect.stringContaining(`has 52 characters, at most 51 are allowed`),
      }),
    ]);
    expect(status.shape).toBeUndefined();
    expect(podsOf(tooLong)).toEqual([]);
    const services = await cluster.clients.core.listNamespacedService({ namespace: 'default' });
    expect(services.items.map((s) => s.metadata?.name)).not.toContain(tooLong);
    expect(services.items.map((s) => s.metadata?.name)).toContain(atLimit);
  });
});
