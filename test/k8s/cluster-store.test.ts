import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import { KEY_JOB, KEY_RECORDS, configMapNameOf } from '../../controller/src/k8s/store/cluster-store';
import { recordBytes } from '../../controller/src/k8s/store/observation-budget';
import type { RuntimeDocument, StoredRecord } from '../../controller/src/runtime/backend';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { CONTROLLER_TOKEN, startBackend, until } from './backend-fixture';
import { jobRecordOf, storedRecord, storeOf } from './store-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster;
let backend: KubernetesBackend;

beforeEach(async () => {
  cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 16, memory: 64 * GiB } }]);
  backend = startBackend(cluster);
  await backend.start();
  await until(() => backend.leader.isLeader());
  await cluster.submit({ name: 'a' });
  await cluster.submit({ name: 'b' });
  await until(() => backend.jobs.active().length === 2);
});
afterEach(async () => {
  await backend.stop();
  await cluster.close();
});

const configMapWrites = () =>
  cluster.double.requests.filter(
    (r) =>
      r.user === CONTROLLER_TOKEN && r.resource === 'configmaps' && ['create', 'update'].includes(r.verb),
  ).length;
const docOf = (jobs: RuntimeDocument['jobs'], decisions = 1): RuntimeDocument => ({
  v: 1,
  originMs: 5000,
  decisions,
  jobs,
});
const readConfigMap = (job: string) =>
  cluster.clients.core.readNamespacedConfigMap({ namespace: 'default', name: configMapNameOf(job) });

describe('ClusterStore', () => {
  it('batches: records and documents only mark jobs dirty; a flush writes each changed job once', async () => {
    const store = storeOf(backend);
    await store.load();
    const [a, b] = [jobRecordOf(backend, 'default/a'), jobRecordOf(backend, 'default/b')];
    for (let seq = 0; seq < 200; seq++) store.appendRecord(storedRecord({ job: seq % 2 ? 'a' : 'b', seq }));
    await store.saveDocument(docOf([a, b]));
    expect(configMapWrites()).toBe(0);
    await store.flush();
    expect(configMapWrites()).toBe(2);
    await store.saveDocument(docOf([a, b], 2)); // only the decision counter moved
    await store.flush();
    expect(configMapWrites()).toBe(2);
    a.phase = 'running';
    await store.saveDocument(docOf([a, b], 3));
    await store.flush();
    expect(configMapWrites()).toBe(3);
    const cm = await readConfigMap('a');
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'OptimusJob',
      name: 'a',
      controller: true,
    });
    expect(JSON.parse(cm.data![KEY_JOB]!)).toMatchObject({
      v: 1,
      originMs: 5000,
      decisions: 3,
      record: { phase: 'running' },
    });
    expect(cm.data![KEY_RECORDS]!.trim().split('\n')).toHaveLength(100);
  });

  it('writes a new target through before the save resolves, and rejects while it cannot', async () => {
    const store = storeOf(backend);
    await store.load();
    const a = jobRecordOf(backend, 'default/a');
    const targetOf = (generation: number) => ({
      generation,
      tasks: [{ role: 'ps' as const, index: 0, server: 'n1', generation }],
      checkpoint: true,
      restart: false,
      fitted: false,
      sinceMs: 0,
      deadlineMs: 1e12,
    });
    a.target = targetOf(1);
    await store.saveDocument(docOf([a]));
    expect(configMapWrites()).toBe(1);
    expect(JSON.parse((await readConfigMap('a')).data![KEY_JOB]!)).toMatchObject({
      record: { target: { generation: 1 } },
    });
    // The same target again, or another change without a new target: batched as before.
    a.phase = 'running';
    await store.saveDocument(docOf([a], 2));
    expect(configMapWrites()).toBe(1);
    // Read back by a controller that restarts: the target is what its ConfigMap holds.
    const again = storeOf(backend);
    const loaded = await again.load();
    expect(loaded.doc?.jobs.find((r) => r.spec.name === 'a')?.target).toMatchObject({ generation: 1 });
    const follower = storeOf(backend, { isLeader: () => false });
    await follower.load();
    a.target = targetOf(2);
    await expect(follower.saveDocument(docOf([a], 3))).rejects.toThrow(/not in their ConfigMaps/);
    expect(configMapWrites()).toBe(1);
  });

  it('flushes on its own after flushMs, and a replica that is not the leader writes nothing', async () => {
    const store = storeOf(backend, { flushMs: 50 });
    await store.load();
    await store.saveDocument(docOf([jobRecordOf(backend, 'default/a')]));
    await until(() => configMapWrites() === 1, 2000);
    const follower = storeOf(backend, { isLeader: () => false });
    await follower.saveDocument(docOf([jobRecordOf(backend, 'default/b')]));
    await follower.close();
    expect(configMapWrites()).toBe(1);
    await store.close();
  });

  it('keeps a job within its budget: every epoch record survives, old batch records are thinned', async () => {
    const budget = 128 * 1024;
    const store = storeOf(backend, { maxRecordBytes: budget });
    await store.load();
    const all: StoredRecord[] = [];
    for (let seq = 0; seq < 2000; seq++) {
      all.push(storedRecord({ job: 'a', seq, index: seq % 2 }));
      if (seq % 100 === 99) all.push(storedRecord({ job: 'a', seq, kind: 'epoch', epoch: (seq + 1) / 100 }));
    }
    const rec = jobRecordOf(backend, 'default/a');
    await store.saveDocument(docOf([rec]));
    // Flushed along the way, as the runtime does: the bound holds at every write.
    for (const [i, r] of all.entries()) {
      store.appendRecord(r);
      if (i % 500 === 0) await store.flush();
    }
    await store.close();
    expect(store.stats.dropped).toBeGreaterThan(0);
    const stored = (await readConfigMap('a')).data![KEY_RECORDS]!;
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(budget);
    const { records } = await storeOf(backend).load();
    expect(records.reduce((n, r) => n + recordBytes(r), 0)).toBeLessThanOrEqual(budget);
    expect(records.filter((r) => r.record.kind === 'epoch')).toEqual(
      all.filter((r) => r.record.kind === 'epoch'),
    );
    const batches = (rs: StoredRecord[]) => rs.filter((r) => r.record.kind === 'batch');
    expect(batches(records).slice(-100)).toEqual(batches(all).slice(-100));
  });

  it('a write after someone else wrote (409) re-reads the version and wins while it leads', async () => {
    const a = jobRecordOf(backend, 'default/a');
    const old = storeOf(backend);
    await old.load();
    await old.saveDocument(docOf([a]));
    await old.flush();
    const errors: unknown[] = [];
    const next = storeOf(backend, { onError: (e) => errors.push(e) });
    expect((await next.load()).doc?.jobs).toEqual([a]);
    old.appendRecord(storedRecord({ job: 'a', seq: 1 }));
    await old.flush(); // the ConfigMap moves on behind the new store's back
    next.appendRecord(storedRecord({ job: 'a', seq: 2 }));
    await next.close();
    expect(errors).toEqual([]);
    expect(next.stats.writes).toBe(1);
    const conflicts = cluster.double.requests.filter((r) => r.resource === 'configmaps' && r.status === 409);
    expect(conflicts).toHaveLength(1);
    expect((await storeOf(backend).load()).records).toEqual([storedRecord({ job: 'a', seq: 2 })]);
  });

  it('skips a ConfigMap it cannot read as its own, with a clear error, and loads the rest', async () => {
    const store = storeOf(backend);
    await store.load();
    const b = jobRecordOf(backend, 'default/b');
    store.appendRecord(storedRecord({ job: 'b', seq: 1 }));
    await store.saveDocument(docOf([b]));
    await store.close();
    await cluster.clients.core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: { name: configMapNameOf('a') },
        data: { [KEY_JOB]: '{"v":1,"originMs":1,"record":{"spec":{}}}' },
      },
    });
    const cm = await readConfigMap('b');
    await cluster.clients.core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: configMapNameOf('b'),
      body: {
        ...cm,
        data: { ...cm.data, [KEY_RECORDS]: `${cm.data![KEY_RECORDS]}not json\n{"task":{},"record":{}}\n` },
      },
    });
    const errors: string[] = [];
    const loaded = await storeOf(backend, { onError: (e) => errors.push(String(e)) }).load();
    expect(loaded.doc?.jobs).toEqual([b]);
    expect(loaded.records).toEqual([storedRecord({ job: 'b', seq: 1 })]);
    expect(errors).toEqual([
      expect.stringContaining('ConfigMap default/a-observations: job.json: record.spec'),
    ]);
  });
});
