/**
 * The cluster store's answer to "is everything appended so far in the cluster?" (ADR 0012): the
 * watermarks that let sidecars forget records wait for it, so it must say no whenever a record is
 * not in its ConfigMap yet.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startBackend, until } from './backend-fixture';
import { jobRecordOf, storedRecord, storeOf } from './store-fixture';

let cluster: TestCluster;
let backend: KubernetesBackend;

beforeEach(async () => {
  cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 16, memory: 64 * 1024 ** 3 } }]);
  backend = startBackend(cluster);
  await backend.start();
  await until(() => backend.leader.isLeader());
  await cluster.submit({ name: 'a' });
  await until(() => backend.jobs.active().length === 1);
});
afterEach(async () => {
  await backend.stop();
  await cluster.close();
});

describe('ClusterStore.durable', () => {
  it('is true only once the records appended before the call are written to the ConfigMap', async () => {
    const store = storeOf(backend, { flushMs: 60_000 });
    await store.load();
    store.appendRecord(storedRecord({ job: 'a', seq: 1 }));
    // The job's document was never saved: nothing to write the ConfigMap with yet.
    expect(await store.durable()).toBe(false);
    await store.saveDocument({ v: 1, originMs: 0, decisions: 1, jobs: [jobRecordOf(backend, 'default/a')] });
    expect(await store.durable()).toBe(true);
    store.appendRecord(storedRecord({ job: 'a', seq: 2 }));
    expect(await store.durable()).toBe(true);
    await store.close();
  });

  it('is false on a replica that does not lead (it writes nothing)', async () => {
    const store = storeOf(backend, { flushMs: 60_000, isLeader: () => false });
    await store.load();
    await store.saveDocument({ v: 1, originMs: 0, decisions: 1, jobs: [jobRecordOf(backend, 'default/a')] });
    store.appendRecord(storedRecord({ job: 'a', seq: 1 }));
    expect(await store.durable()).toBe(false);
    await store.close();
  });
});
