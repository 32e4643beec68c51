import type { EventsV1Event } from '@kubernetes/client-node';
import { EventsV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import type { TaskPlacement } from '../../controller/src/scheduling/types';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { finishExited, startBackend, until } from './backend-fixture';

const GiB = 1024 ** 3;
const NODES = [
  { name: 'n1', capacity: { cpu: 16, memory: 64 * GiB } },
  { name: 'n2', capacity: { cpu: 16, memory: 64 * GiB } },
  { name: 'small', capacity: { cpu: 2, memory: 4 * GiB } },
];
const place = (ps: string[], workers: string[]): TaskPlacement[] => [
  ...ps.map((server, index) => ({ role: 'ps' as const, index, server })),
  ...workers.map((server, index) => ({ role: 'worker' as const, index, server })),
];

let cluster: TestCluster;
let backend: KubernetesBackend;
const backendErrors: unknown[] = [];

async function setup(): Promise<void> {
  backendErrors.length = 0;
  cluster = await startTestCluster(NODES, {
    // The training process checkpoints on SIGTERM; the sidecar reports it.
    onTerminate: (pod) =>
      backend.checkpoints.record(`default/${pod.metadata.labels?.['optimus.dev/job']}`, Date.now()),
  });
  backend = startBackend(cluster, 'controller-0', { onError: (err) => backendErrors.push(err) });
  await backend.start();
  await until(() => backend.leader.isLeader());
}
afterEach(async () => {
  await backend.stop();
  await cluster.close();
});

/** The events of the namespace as `kubectl get events` reads them, oldest first. */
async function eventsOf(namespace = 'default'): Promise<EventsV1Event[]> {
  await backend.events.idle();
  const api = kubeConfigFor(cluster.double.url).makeApiClient(EventsV1Api);
  const list = await api.listNamespacedEvent({ namespace });
  // The client hands eventTime (a MicroTime) back as the wire string; ties within a ms go by name,
  // whose suffix carries the recorder's sequence number.
  const key = (e: EventsV1Event) => `${String(e.eventTime)} ${e.metadata?.name ?? ''}`;
  return list.items.sort((a, b) => key(a).localeCompare(key(b)));
}

const start = (job: string, ps: string[], workers: string[]) =>
  backend.executor.execute({
    actions: [
      {
        kind: 'start',
        jobId: `default/${job}`,
        shape: { ps: ps.length, workers: workers.length },
        placement: place(ps, workers),
      },
    ],
  });
const resize = (job: string, from: [number, number], ps: string[], workers: string[]) =>
  backend.executor.execute({
    actions: [
      {
        kind: 'resize',
        jobId: `default/${job}`,
        from: { ps: from[0], workers: from[1] },
        shape: { ps: ps.length, workers: workers.length },
        placement: place(ps, workers),
      },
    ],
  });

describe('Kubernetes Events (events.k8s.io/v1) about OptimusJobs', () => {
  it('a job that starts, is resized and completes leaves Started, Checkpointed, Resized, Completed', async () => {
    await setup();
    const job = await cluster.submit({ name: 'resnet' });
    expect((await start('resnet', ['n1'], ['n1'])).failed).toEqual([]);
    expect((await resize('resnet', [1, 1], ['n1', 'n2'], ['n1', 'n2', 'n2'])).failed).toEqual([]);
    for (const i of [0, 1, 2]) cluster.fake.exit('default', `resnet-worker-${i}`, 0);
    expect((await finishExited(backend, 'default/resnet')).end.outcome).toBe('succeeded');

    const events = await eventsOf();
    expect(events.map((e) => [e.reason, e.type, e.action])).toEqual([
      ['Started', 'Normal', 'Start'],
      ['Checkpointed', 'Normal', 'Stop'],
      ['Resized', 'Normal', 'Resize'],
      ['Completed', 'Normal', 'Complete'],
    ]);
    expect(events[0]?.note).toBe('started with 1 PS / 1 worker on n1');
    expect(events[2]?.note).toBe('1 PS / 1 worker → 2 PS / 3 workers');
    expect(events[3]?.note).toMatch(/^WorkersSucceeded: all 3 workers finished; JCT \d+ s$/);
    for (const e of events) {
      expect(e.regarding).toMatchObject({
        apiVersion: 'optimus.dev/v1alpha2',
        kind: 'OptimusJob',
        namespace: 'default',
        name: 'resnet',
        uid: job.metadata.uid,
      });
      expect(e).toMatchObject({
        reportingController: 'optimus.dev/controller',
        reportingInstance: 'controller-0',
      });
      expect(e.metadata?.name).toMatch(/^resnet\.[0-9a-f]+$/);
    }
    // On the wire eventTime has microseconds, as the API server requires (the double checks it too).
    const stored = cluster.double.api.store.list(
      cluster.double.api.resolve('events.k8s.io', 'v1', 'events')!,
      'default',
    );
    for (const e of stored) expect(e['eventTime']).toMatch(/T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  it('a rollout that cannot start and is rolled back leaves a RolledBack warning with the reason', async () => {
    await setup();
    await cluster.submit({ name: 'big', workerDemand: { cpu: 4, memory: 8 * GiB } });
    await start('big', ['n1'], ['n2']);
    const r = await resize('big', [1, 1], ['n1'], ['n2', 'small']);
    expect(r.failed[0]?.error).toMatch(/rolled back/);
    const warnings = (await eventsOf()).filter((e) => e.type === 'Warning');
    expect(warnings.map((e) => e.reason)).toEqual(['RolledBack']);
    expect(warnings[0]?.note).toMatch(
      /^rollout to 1 PS \/ 2 workers failed \(Unschedulable: .+\); rolled back to 1 PS \/ 1 worker$/,
    );
  });

  it.each([
    {
      name: 'a straggler moved to another server',
      action: { kind: 'replace-worker' as const, jobId: 'default/j', index: 0, server: 'n2' },
      reason: 'WorkerReplaced',
      note: 'worker 0 moved from n1 to n2',
    },
    {
      name: 'a suspended job',
      action: { kind: 'suspend' as const, jobId: 'default/j', reason: 'waits for resources' },
      reason: 'Suspended',
      note: 'waits for resources',
    },
  ])('$name leaves a Normal $reason event', async ({ action, reason, note }) => {
    await setup();
    await cluster.submit({ name: 'j' });
    await start('j', ['n1'], ['n1']);
    expect((await backend.executor.execute({ actions: [action] })).failed).toEqual([]);
    const last = (await eventsOf()).at(-1);
    expect(last).toMatchObject({ type: 'Normal', reason, note });
  });

  it.each([
    {
      name: 'a start that fits nowhere leaves RolloutFailed',
      run: async () => {
        await cluster.submit({ name: 'j', workerDemand: { cpu: 4, memory: 8 * GiB } });
        await start('j', ['n1'], ['small']);
      },
      reason: 'RolloutFailed',
      note: /^rollout to 1 PS \/ 1 worker failed \(Unschedulable: .+\); the job holds no pods/,
    },
    {
      name: 'a failed worker leaves Failed with the JCT',
      run: async () => {
        await cluster.submit({ name: 'j' });
        await start('j', ['n1'], ['n1']);
        cluster.fake.exit('default', 'j-worker-0', 1);
        expect((await finishExited(backend, 'default/j')).end.outcome).toBe('failed');
      },
      reason: 'Failed',
      note: /^WorkerFailed: worker pod j-worker-0 failed: .+; JCT \d+ s$/,
    },
  ])('$name (Warning)', async ({ run, reason, note }) => {
    await setup();
    await run();
    const warnings = (await eventsOf()).filter((e) => e.type === 'Warning');
    expect(warnings.map((e) => e.reason)).toEqual([reason]);
    expect(warnings[0]?.note).toMatch(note);
  });

  it('an event endpoint that answers 500 neither fails nor stops the rollout; failures are reported', async () => {
    await setup();
    const undo = cluster.double.fail({ group: 'events.k8s.io', resource: 'events' }, 500);
    await cluster.submit({ name: 'j' });
    expect((await start('j', ['n1'], ['n1'])).failed).toEqual([]);
    expect((await resize('j', [1, 1], ['n1'], ['n1', 'n2'])).failed).toEqual([]);
    const job = await cluster.job('default', 'j');
    expect(job.status).toMatchObject({ phase: 'Running', shape: { ps: 1, workers: 2 } });
    await backend.events.idle();
    const posts = cluster.double.requests.filter((q) => q.group === 'events.k8s.io' && q.verb === 'create');
    expect(posts.map((q) => q.status)).toEqual([500, 500, 500]); // Started, Checkpointed, Resized
    expect(backendErrors.filter((e) => String(e).includes('500'))).toHaveLength(3);
    undo();
    expect(await eventsOf()).toEqual([]);
  });
});
