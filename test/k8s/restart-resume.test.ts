import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import { currentOf } from '../../controller/src/k8s';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startBackend, until } from './backend-fixture';
import { jobRecordOf, storedRecord, storeOf } from './store-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster;
const backends: KubernetesBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.stop();
  await cluster.close();
});

describe('controller restart', () => {
  it('resumes from the job status: shape, placement, restarts and observations survive', async () => {
    cluster = await startTestCluster([
      { name: 'n1', capacity: { cpu: 16, memory: 64 * GiB } },
      { name: 'n2', capacity: { cpu: 16, memory: 64 * GiB } },
    ]);
    const first = startBackend(cluster, 'controller-a');
    backends.push(first);
    await first.start();
    await until(() => first.leader.isLeader());
    await cluster.submit({ name: 'lm' });
    const placement = [
      { role: 'ps' as const, index: 0, server: 'n1' },
      { role: 'worker' as const, index: 0, server: 'n2' },
    ];
    await first.executor.execute({
      actions: [{ kind: 'start', jobId: 'default/lm', shape: { ps: 1, workers: 1 }, placement }],
    });
    await first.executor.execute({
      actions: [
        {
          kind: 'resize',
          jobId: 'default/lm',
          from: { ps: 1, workers: 1 },
          shape: { ps: 1, workers: 1 },
          placement: [placement[0]!, { ...placement[1]!, server: 'n1' }],
        },
      ],
    });
    await first.status.report('default/lm', {
      progress: 0.25,
      predictedCompletionSec: 1_900_000_000,
      models: { speed: { theta: [1, 2, 3, 4, 5] } },
    });
    const firstStore = storeOf(first);
    await firstStore.load();
    const rec = jobRecordOf(first, 'default/lm', 12);
    const obs = [storedRecord({ job: 'lm', seq: 1 }), storedRecord({ job: 'lm', seq: 2, kind: 'epoch' })];
    for (const r of obs) firstStore.appendRecord(r);
    await firstStore.saveDocument({ v: 1, originMs: 1000, decisions: 7, jobs: [rec] });
    await firstStore.close();
    await first.stop();
    backends.splice(0);

    const second = startBackend(cluster, 'controller-b');
    backends.push(second);
    await second.start();
    await until(() => second.leader.isLeader() && second.jobs.active().length === 1, 4000);
    const entry = second.jobs.active()[0]!;
    expect(currentOf(entry.job)).toEqual({
      shape: { ps: 1, workers: 1 },
      placement: [placement[0], { ...placement[1], server: 'n1' }],
    });
    expect(entry.job.status).toMatchObject({
      restarts: 1,
      progress: '25%',
      predictedCompletionTime: '2030-03-17T17:46:40Z',
      models: { speed: { theta: [1, 2, 3, 4, 5] } },
    });
    expect(await storeOf(second).load()).toEqual({
      doc: { v: 1, originMs: 1000, decisions: 7, jobs: [rec] },
      records: obs,
    });
    expect(entry.job.status?.observationsConfigMap).toBe('lm-observations');
    // The new controller carries on: its resize counts on top of what the status holds.
    const r = await second.executor.execute({
      actions: [
        {
          kind: 'resize',
          jobId: 'default/lm',
          from: { ps: 1, workers: 1 },
          shape: { ps: 1, workers: 2 },
          placement: [...placement, { role: 'worker', index: 1, server: 'n1' }],
        },
      ],
    });
    expect(r.failed).toEqual([]);
    expect((await cluster.job('default', 'lm')).status?.restarts).toBe(2);
  });
});
