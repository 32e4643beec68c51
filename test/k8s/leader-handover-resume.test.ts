/**
 * The contract of the cluster store: a second controller (other process state, same API) that
 * takes the lease over resumes every job with its observations, bounded in size.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_RECORDS, configMapNameOf } from '../../controller/src/k8s/store/cluster-store';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import { metricsTopic } from '../../shared/src/topics';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startRun, until } from './backend-fixture';
import { storedRecord } from './store-fixture';

const GiB = 1024 ** 3;
const BUDGET = 48 * 1024;
const JOBS = ['a', 'b', 'c'];
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
const runs: KubernetesRun[] = [];
afterEach(async () => {
  for (const r of runs.splice(0)) await r.stop();
  await broker?.close();
  await cluster?.close();
});

async function start(identity: string): Promise<KubernetesRun> {
  const run = await startRun(cluster!, broker!.url, {
    identity,
    store: { flushMs: 100, maxRecordBytes: BUDGET },
  });
  runs.push(run);
  return run;
}

/** Epoch lines of worker 0 (what the convergence fit needs) and many parameter-server lines. */
function feed(run: KubernetesRun, job: string, from: number): void {
  const now = Date.now();
  for (let epoch = 0; epoch < 12; epoch++) {
    const r = storedRecord({ job, seq: from + epoch, kind: 'epoch', epoch, ts: now });
    // Falling fast enough that the convergence rule (δ 0.02, K 3) does not end the job yet.
    const record = { ...r.record, loss: 4 / (0.2 * epoch + 1) + 0.1 };
    run.controller.handleMessage(metricsTopic(r.task), Buffer.from(JSON.stringify(record)));
  }
  for (let i = 0; i < 400; i++) {
    const r = storedRecord({ job, seq: from + 100 + i, role: 'ps', ts: now });
    run.controller.handleMessage(metricsTopic(r.task), Buffer.from(JSON.stringify(r.record)));
  }
}

type View = { phase: string; submittedAt: number; restarts: number; observations: Record<string, unknown> };
const views = (run: KubernetesRun) =>
  new Map(run.controller.list().map((v) => [v['id'] as string, v as unknown as View]));

describe('leader handover with the cluster store', () => {
  it('resumes every job with its observations on the other replica, bounded in size', async () => {
    cluster = await startTestCluster([
      { name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } },
      { name: 'n2', capacity: { cpu: 32, memory: 128 * GiB } },
    ]);
    broker = await startEmbeddedBroker(0);
    const first = await start('controller-a');
    for (const j of JOBS) await cluster.submit({ name: j });
    await until(() => first.controller.list().length === JOBS.length, 5000);
    for (const j of JOBS) feed(first, j, 0);
    const before = views(first);
    for (const j of JOBS) expect(before.get(`default/${j}`)?.observations).toMatchObject({ lossPoints: 12 });
    await first.stop(); // flushes the store, then releases the lease
    expect(first.store.stats.dropped).toBeGreaterThan(0);

    const second = await start('controller-b');
    expect(second.backend.leader.isLeader()).toBe(true);
    const after = views(second);
    expect([...after.keys()].sort()).toEqual(JOBS.map((j) => `default/${j}`));
    for (const [id, v] of before) {
      const w = after.get(id)!;
      expect(w.submittedAt, id).toBe(v.submittedAt);
      expect(w.restarts, id).toBe(v.restarts);
      // Worker observations (all pinned epoch lines here) survive whole.
      expect(w.observations, id).toEqual(v.observations);
    }
    for (const j of JOBS) {
      const cm = await cluster.clients.core.readNamespacedConfigMap({
        namespace: 'default',
        name: configMapNameOf(j),
      });
      expect(Buffer.byteLength(cm.data![KEY_RECORDS]!)).toBeLessThanOrEqual(BUDGET);
    }

    // The new leader carries on: a round fits the models and the printer columns fill in.
    await second.controller.roundNow('full');
    await until(async () => (await cluster!.job('default', 'a')).status?.progress !== undefined, 5000);
    const status = (await cluster.job('default', 'a')).status!;
    expect(status.progress).toMatch(/^\d+%$/);
    expect(status.models).toMatchObject({ convergence: { status: 'ok' } });
  }, 30_000);
});
