/**
 * A controller killed (SIGKILL, a real process) at the worst moments of the level-triggered loop,
 * then started again: the new one starts from what the cluster shows — pods and job statuses —
 * and from the job's target, which its ConfigMap store holds before anything steps toward it
 * (ADR 0035; the rest of the store lags by up to a flush period).
 *   - right after it recorded a job as Succeeded, before deleting any pod: the job is adopted as
 *     finished (never started again) and its pods are deleted — the status is written first, so
 *     this crash can no longer leave a job with 0 pods whose status says it runs;
 *   - right after the first pod delete of that finish: the same;
 *   - right after a resize was recorded in the job status: the new shape is adopted, not rolled
 *     out again (no unneeded checkpoint–restart).
 */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_JOB, configMapNameOf } from '../../controller/src/k8s/store/cluster-store';
import type { OptimusJob } from '../../controller/src/k8s/api/optimus-job';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import type { JobRecord } from '../../controller/src/runtime/job-record';
import { metricsTopic } from '../../shared/src/topics';
import type { StoredEvent } from '../k8s-api-double/store';
import { CONTROLLER_TOKEN, startRun, until } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import type { ControllerProcess } from './controller-process';
import { spawnController } from './controller-process';
import { storedRecord } from './store-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let proc: ControllerProcess | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await proc?.kill();
  await run?.stop();
  await broker?.close();
  await cluster?.close();
  [proc, run, broker, cluster] = [undefined, undefined, undefined, undefined];
});

async function setup(): Promise<TestCluster> {
  cluster = await startTestCluster([
    { name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } },
    { name: 'n2', capacity: { cpu: 32, memory: 128 * GiB } },
  ]);
  broker = await startEmbeddedBroker(0);
  proc = spawnController(cluster, broker.url);
  return cluster;
}

const livePods = (c: TestCluster, job: string) =>
  c.pods('default').filter((p) => p.metadata?.labels?.['optimus.dev/job'] === job);

/** The runtime's record of `job` as its ConfigMap holds it (null before the first flush). */
async function storedRecordOf(c: TestCluster, job: string): Promise<JobRecord | null> {
  try {
    const cm = await c.clients.core.readNamespacedConfigMap({
      namespace: 'default',
      name: configMapNameOf(job),
    });
    return (JSON.parse(cm.data?.[KEY_JOB] ?? 'null') as { record: JobRecord } | null)?.record ?? null;
  } catch {
    return null;
  }
}

/** The job's pre-run sample runs and the (lagging) store has recorded it. */
async function preRunning(c: TestCluster, job: string, timeoutMs = 60_000): Promise<OptimusJob> {
  await until(async () => (await c.job('default', job)).status?.phase === 'Running', timeoutMs);
  await until(async () => (await storedRecordOf(c, job))?.phase === 'pre-run', 15_000);
  return c.job('default', job);
}

const isJobStatus = (job: string, ok: (j: OptimusJob) => boolean) => (e: StoredEvent) =>
  e.typeKey === 'optimus.dev/optimusjobs' &&
  e.object.metadata.name === job &&
  ok(e.object as unknown as OptimusJob);

/** `p`, or a failure naming `what` and the controller's log after `ms`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no ${what} within ${ms} ms; controller log:\n${proc?.stderr()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The controller's pod writes of `job` after request number `mark`. */
const podWrites = (c: TestCluster, job: string, mark: number) =>
  c.double.requests
    .slice(mark)
    .filter(
      (q) =>
        q.user === CONTROLLER_TOKEN &&
        q.resource === 'pods' &&
        (q.verb === 'create' || q.verb === 'delete') &&
        (q.verb === 'create' || q.path.includes(`/pods/${job}-`)),
    );

describe('a controller killed at the worst moment and started again', () => {
  it.each([
    {
      name: 'right after it recorded the job as Succeeded, before deleting any pod',
      kill: (job: string) => isJobStatus(job, (j) => j.status?.phase === 'Succeeded'),
      deletedBefore: 0,
    },
    {
      name: 'right after the first pod delete of the finish',
      // Deleted at once (grace 0: the program already exited) or marked for deletion.
      kill: (job: string) => (e: StoredEvent) =>
        e.typeKey === '/pods' &&
        e.object.metadata.name.startsWith(`${job}-`) &&
        (e.type === 'DELETED' || e.object.metadata.deletionTimestamp !== undefined),
      deletedBefore: 1,
    },
  ])(
    '$name: the job stays finished, is never started again, and its pods go',
    async ({ kill, deletedBefore }) => {
      const c = await setup();
      await c.submit({ name: 'fin' });
      const before = await preRunning(c, 'fin');
      const workers = before.status?.shape?.workers ?? 0;
      const killed = proc!.killWhen(kill('fin'));
      for (let i = 0; i < workers; i++) c.fake.exit('default', `fin-worker-${i}`, 0);
      await killed;
      await proc!.exited;
      // What the crash left: a finished status, pods still there, a store that holds the finish
      // as the job's target (written through before the end was recorded).
      const left = await c.job('default', 'fin');
      expect(left.status).toMatchObject({ phase: 'Succeeded', completionTime: expect.any(String) });
      expect(left.status?.conditions?.find((x) => x.type === 'Complete')).toMatchObject({
        status: 'True',
        reason: 'WorkersSucceeded',
      });
      expect(podWrites(c, 'fin', 0).filter((q) => q.verb === 'delete')).toHaveLength(deletedBefore);
      expect(livePods(c, 'fin').length).toBeGreaterThan(1);
      expect((await storedRecordOf(c, 'fin'))?.target?.end).toMatchObject({ outcome: 'succeeded' });

      const mark = c.double.requests.length;
      run = await startRun(c, broker!.url);
      await until(() => livePods(c, 'fin').length === 0, 15_000);
      await run.controller.roundNow('full');
      await run.controller.settled();
      expect(run.controller.get('default/fin')).toMatchObject({
        phase: 'done',
        end: { reason: 'WorkersSucceeded' },
      });
      expect(podWrites(c, 'fin', mark).filter((q) => q.verb === 'create')).toEqual([]);
      const after = await c.job('default', 'fin');
      expect(after.status).toMatchObject({ phase: 'Succeeded', completionTime: left.status?.completionTime });
      expect(livePods(c, 'fin')).toEqual([]);
    },
    120_000,
  );

  it('right after a resize was recorded in the job status: the new shape is adopted, not rolled out again', async () => {
    const c = await setup();
    await c.submit({ name: 'moved' });
    const before = await preRunning(c, 'moved');
    const first = before.status!.shape!;
    const killed = proc!.killWhen(
      isJobStatus(
        'moved',
        (j) =>
          j.status?.phase === 'Running' &&
          (j.status.shape?.ps !== first.ps || j.status.shape.workers !== first.workers),
      ),
    );
    // The first sample's workers log speed: the pre-run moves to its next sample shape.
    const sidecar = await mqtt.connectAsync(broker!.url, { clientId: 'sidecar-test' });
    for (let i = 0; i < first.workers; i++)
      for (let seq = 0; seq < 6; seq++) {
        const { task, record } = storedRecord({ job: 'moved', index: i, seq, ts: Date.now() });
        await sidecar.publishAsync(metricsTopic(task), JSON.stringify(record), { qos: 1 });
      }
    await sidecar.endAsync();
    const resized = (await within(killed, 30_000, 'the resize')) as unknown as OptimusJob;
    await proc!.exited;
    const second = resized.status!.shape!;
    expect(resized.status?.restarts).toBe(1);
    // The store still has the job at its first sample: the resize reached only the cluster.
    const stored = await storedRecordOf(c, 'moved');
    expect(stored?.spans.at(-1)?.shape).toEqual(first);
    expect(stored?.preRun?.done).toBe(0);

    const mark = c.double.requests.length;
    run = await startRun(c, broker!.url);
    for (let i = 0; i < 3; i++) {
      await run.controller.roundNow('full');
      await run.controller.settled();
    }
    await new Promise((r) => setTimeout(r, 500)); // informer nudges: a few more rounds
    await run.controller.settled();
    expect(podWrites(c, 'moved', mark)).toEqual([]);
    expect((await c.job('default', 'moved')).status).toMatchObject({
      phase: 'Running',
      shape: second,
      restarts: 1,
    });
    expect(run.controller.get('default/moved')).toMatchObject({ phase: 'pre-run', shape: second });
  }, 120_000);
});
