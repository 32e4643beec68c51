/**
 * A controller that restarts under the same identity resumes its persistent MQTT session: the
 * broker delivers the QoS 1 records queued while it was away right after the CONNACK, before the
 * runtime is ready. None of them may be lost.
 */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import { metricsTopic, taskKey } from '../../shared/src/topics';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startRun, until } from './backend-fixture';
import { storedRecord } from './store-fixture';

const GiB = 1024 ** 3;
const QUEUED = 20;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
const runs: KubernetesRun[] = [];
afterEach(async () => {
  for (const r of runs.splice(0)) await r.stop();
  await broker?.close();
  await cluster?.close();
});

async function start(): Promise<KubernetesRun> {
  const run = await startRun(cluster!, broker!.url, { store: { flushMs: 100 } });
  runs.push(run);
  return run;
}

describe('controller restart with a persistent MQTT session', () => {
  it('keeps the records the broker queued while the controller was down', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } }]);
    broker = await startEmbeddedBroker(0);
    const first = await start();
    await cluster.submit({ name: 'cifar' });
    await until(() => first.controller.list().length === 1, 5000);
    await first.stop();
    runs.splice(0);

    const sidecar = await mqtt.connectAsync(broker.url, { clientId: 'sidecar-test' });
    const task = storedRecord({ job: 'cifar', seq: 0 }).task;
    for (let seq = 0; seq < QUEUED; seq++) {
      const { record } = storedRecord({ job: 'cifar', seq });
      await sidecar.publishAsync(metricsTopic(task), JSON.stringify(record), { qos: 1 });
    }
    await sidecar.endAsync();

    const second = await start();
    await until(() => (second.controller.ingest.perTask().get(taskKey(task))?.received ?? 0) >= QUEUED, 5000);
    expect(second.controller.ingest.perTask().get(taskKey(task))).toEqual({
      received: QUEUED,
      maxSeq: QUEUED - 1,
    });
  }, 20_000);
});
