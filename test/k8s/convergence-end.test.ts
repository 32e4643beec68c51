/**
 * The paper's definition of done, on Kubernetes: a job ends when its convergence rule holds on the
 * loss its sidecars report over MQTT — checkpoint, stop its tasks, mark it done with the reason —
 * not when its program reaches `--num-epochs`.
 */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import { metricsTopic } from '../../shared/src/topics';
import { CONTROLLER_TOKEN, startRun, until } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { storedRecord } from './store-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
  [run, broker, cluster] = [undefined, undefined, undefined];
});

const ourPods = (c: TestCluster, job: string) =>
  c.pods('default').filter((p) => p.metadata?.labels?.['optimus.dev/job'] === job);

/** Worker 0's epoch lines from epoch `from` on (the job's fixture: δ 0.02, K 3, 500 steps per epoch). */
async function logEpochs(url: string, job: string, from: number, losses: readonly number[]): Promise<void> {
  const sidecar = await mqtt.connectAsync(url, { clientId: `sidecar-${job}` });
  for (const [i, loss] of losses.entries()) {
    const epoch = from + i;
    const { task, record } = storedRecord({ job, seq: epoch, kind: 'epoch', epoch, ts: Date.now() });
    await sidecar.publishAsync(metricsTopic(task), JSON.stringify({ ...record, loss }), { qos: 1 });
  }
  await sidecar.endAsync();
}

describe('a job ends when its convergence rule holds on the observed loss', () => {
  it('is checkpointed, stopped and marked Succeeded with the reason Converged', async () => {
    const sigterms: string[] = [];
    cluster = await startTestCluster(
      [
        { name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } },
        { name: 'n2', capacity: { cpu: 32, memory: 128 * GiB } },
      ],
      {
        // The training process gets SIGTERM, writes its checkpoint line; its sidecar reports it.
        onTerminate: (pod) => {
          sigterms.push(pod.metadata.name);
          run?.backend.checkpoints.record(`default/${pod.metadata.labels?.['optimus.dev/job']}`, Date.now());
        },
      },
    );
    broker = await startEmbeddedBroker(0);
    run = await startRun(cluster, broker.url);
    const c = cluster;
    await c.submit({ name: 'conv', gracePeriodSeconds: 45 });
    await until(async () => (await c.job('default', 'conv')).status?.phase === 'Running', 15_000);

    // Falling fast: far from converged after four epochs.
    await logEpochs(broker.url, 'conv', 0, [2, 1.5, 1.1, 0.8]);
    await run.controller.roundNow('full');
    expect((await c.job('default', 'conv')).status?.phase).toBe('Running');
    const mark = c.double.requests.length;
    // What the API server saw, in order: the job's phase and its pods' deletions.
    const timeline: string[] = [];
    const off = c.double.api.store.subscribe((e) => {
      const { name, deletionTimestamp } = e.object.metadata;
      const phase = (e.object['status'] as { phase?: string } | undefined)?.phase;
      if (e.typeKey === 'optimus.dev/optimusjobs' && name === 'conv' && timeline.at(-1) !== phase)
        timeline.push(phase ?? '');
      if (
        e.typeKey === '/pods' &&
        name.startsWith('conv-') &&
        deletionTimestamp !== undefined &&
        e.type !== 'DELETED'
      )
        timeline.push(`delete ${name}`);
    });
    // Then flat: the normalised loss falls by less than 0.02 for three epochs in a row.
    await logEpochs(broker.url, 'conv', 4, [0.79, 0.785, 0.782, 0.78]);

    await until(async () => (await c.job('default', 'conv')).status?.phase === 'Succeeded', 15_000);
    const job = await c.job('default', 'conv');
    expect(job.status?.conditions?.find((x) => x.type === 'Complete')).toMatchObject({
      status: 'True',
      reason: 'Converged',
      message: expect.stringContaining('for 3 epochs'),
    });
    expect(job.status).toMatchObject({ completionTime: expect.any(String), jctSeconds: expect.any(Number) });
    await until(() => ourPods(c, 'conv').length === 0, 15_000);
    off();
    // Recorded first, then stopped with the checkpoint grace: the job saves its model.
    expect(timeline.filter((t) => !t.startsWith('delete')).at(-1)).toBe('Succeeded');
    expect(timeline.findIndex((t) => t === 'Succeeded')).toBeLessThan(
      timeline.findIndex((t) => t.startsWith('delete')),
    );
    const writes = c.double.requests
      .slice(mark)
      .filter(
        (q) => q.user === CONTROLLER_TOKEN && (q.resource === 'optimusjobs/status' || q.resource === 'pods'),
      );
    const deletes = writes.filter((q) => q.verb === 'delete');
    expect(deletes.length).toBeGreaterThan(1);
    expect(deletes.every((q) => q.query.includes('gracePeriodSeconds=45'))).toBe(true);
    expect(writes.filter((q) => q.verb === 'create')).toEqual([]);
    expect(sigterms.length).toBe(deletes.length);
    await until(
      async () =>
        (await c.job('default', 'conv')).status?.conditions?.find((x) => x.type === 'Checkpointed')
          ?.status === 'True',
    );
    expect((await c.job('default', 'conv')).status?.phase).toBe('Succeeded');
    expect(run.controller.get('default/conv')).toMatchObject({
      phase: 'done',
      end: { outcome: 'succeeded', reason: 'Converged' },
    });
  }, 60_000);
});
