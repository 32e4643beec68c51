import type { V1Pod } from '@kubernetes/client-node';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import { currentOf } from '../../controller/src/k8s';
import type { TaskPlacement } from '../../controller/src/scheduling/types';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { CONTROLLER_TOKEN, finishExited, startBackend, until } from './backend-fixture';

const GiB = 1024 ** 3;
const NODES = [
  { name: 'gpu-1', capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 4 } },
  { name: 'gpu-2', capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 4 } },
  { name: 'small', capacity: { cpu: 2, memory: 4 * GiB } },
];
const place = (ps: string[], workers: string[]): TaskPlacement[] => [
  ...ps.map((server, index) => ({ role: 'ps' as const, index, server })),
  ...workers.map((server, index) => ({ role: 'worker' as const, index, server })),
];
const envOf = (pod: V1Pod) =>
  Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
const ourPods = (c: TestCluster, job: string) =>
  c.pods('default').filter((p) => p.metadata?.labels?.['optimus.dev/job'] === job);

let cluster: TestCluster;
let backend: KubernetesBackend;
const log: string[] = [];

async function setup(opts: Parameters<typeof startTestCluster>[1] = {}) {
  log.length = 0;
  cluster = await startTestCluster(NODES, {
    ...opts,
    onTerminate: (pod) => {
      // The training process got SIGTERM: it writes its checkpoint line; the sidecar reports it.
      log.push(`SIGTERM ${pod.metadata.name}`);
      backend.checkpoints.record(`default/${pod.metadata.labels?.['optimus.dev/job']}`, Date.now());
    },
  });
  backend = startBackend(cluster);
  await backend.start();
  await until(() => backend.leader.isLeader());
}
afterEach(async () => {
  await backend.stop();
  await cluster.close();
});

describe('Kubernetes backend: rollout', () => {
  it('creates a job: pods appear pinned to the chosen nodes with the DMLC env, owned by the job', async () => {
    await setup();
    await cluster.submit({ name: 'resnet', workerDemand: { cpu: 2, memory: 4 * GiB, 'nvidia.com/gpu': 1 } });
    await until(() => backend.jobs.active().length === 1);
    const placement = place(['gpu-1'], ['gpu-1', 'gpu-2']);
    const r = await backend.executor.execute({
      actions: [{ kind: 'start', jobId: 'default/resnet', shape: { ps: 1, workers: 2 }, placement }],
    });
    expect(r.failed).toEqual([]);
    const pods = ourPods(cluster, 'resnet');
    expect(pods.map((p) => [p.metadata?.name, p.spec?.nodeName]).sort()).toEqual([
      ['resnet-ps-0', 'gpu-1'],
      ['resnet-scheduler-0', 'gpu-1'],
      ['resnet-worker-0', 'gpu-1'],
      ['resnet-worker-1', 'gpu-2'],
    ]);
    const worker = pods.find((p) => p.metadata?.name === 'resnet-worker-1')!;
    expect(envOf(worker)).toMatchObject({
      DMLC_ROLE: 'worker',
      DMLC_PS_ROOT_URI: 'scheduler-0.resnet.default.svc',
      DMLC_PS_ROOT_PORT: '9091',
      DMLC_NUM_SERVER: '1',
      DMLC_NUM_WORKER: '2',
      DMLC_USE_KUBERNETES: '1',
    });
    expect(envOf(pods.find((p) => p.metadata?.name === 'resnet-ps-0')!).DMLC_ROLE).toBe('server');
    const job = await cluster.job('default', 'resnet');
    expect(worker.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'OptimusJob', uid: job.metadata.uid, controller: true }),
    ]);
    expect(worker.metadata?.labels).toEqual({
      'optimus.dev/job': 'resnet',
      'optimus.dev/role': 'worker',
      'optimus.dev/index': '1',
    });
    expect(worker.metadata?.annotations?.['optimus.dev/inject']).toBe('true');
    expect(
      worker.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms[0]?.matchFields,
    ).toEqual([{ key: 'metadata.name', operator: 'In', values: ['gpu-2'] }]);
    for (const p of pods) expect(() => new Pod(p as never).validate()).not.toThrow();
    const svc = await cluster.clients.core.readNamespacedService({ namespace: 'default', name: 'resnet' });
    expect(svc.spec?.clusterIP).toBe('None');
    expect(() => new Service(JSON.parse(JSON.stringify(svc)) as never).validate()).not.toThrow();
    expect(job.status).toMatchObject({ phase: 'Running', shape: { ps: 1, workers: 2 }, restarts: 0 });
    await until(() => backend.jobs.active()[0]?.job.status?.phase === 'Running');
    expect(currentOf(backend.jobs.active()[0]!.job)?.placement).toEqual(placement);
    await until(
      () =>
        backend
          .observe()
          .jobs.get('default/resnet')
          ?.tasks.filter((t) => t.state === 'running').length === 3,
    );
    expect(backend.observe().jobs.get('default/resnet')?.tasks).toEqual(
      expect.arrayContaining(placement.map((p) => ({ ...p, state: 'running' }))),
    );
  });

  it('resizes by checkpoint → delete → create: SIGTERM with grace, checkpoint line, then the new set', async () => {
    await setup();
    await cluster.submit({ name: 'r', gracePeriodSeconds: 45 });
    await backend.executor.execute({
      actions: [
        {
          kind: 'start',
          jobId: 'default/r',
          shape: { ps: 1, workers: 1 },
          placement: place(['gpu-1'], ['gpu-1']),
        },
      ],
    });
    const mark = cluster.double.requests.length;
    const r = await backend.executor.execute({
      actions: [
        {
          kind: 'resize',
          jobId: 'default/r',
          from: { ps: 1, workers: 1 },
          shape: { ps: 2, workers: 3 },
          placement: place(['gpu-1', 'gpu-2'], ['gpu-1', 'gpu-2', 'gpu-2']),
        },
      ],
    });
    expect(r.failed).toEqual([]);
    const calls = cluster.double.requests
      .slice(mark)
      .filter((q) => q.resource === 'pods' && (q.verb === 'delete' || q.verb === 'create'));
    const firstCreate = calls.findIndex((q) => q.verb === 'create');
    expect(calls.slice(0, firstCreate).map((q) => q.verb)).toEqual(['delete', 'delete', 'delete']);
    expect(calls.slice(0, firstCreate).every((q) => q.query.includes('gracePeriodSeconds=45'))).toBe(true);
    expect(calls.slice(firstCreate).map((q) => q.verb)).toEqual(Array(6).fill('create'));
    expect(log.sort()).toEqual(['SIGTERM r-ps-0', 'SIGTERM r-scheduler-0', 'SIGTERM r-worker-0']);
    const job = await cluster.job('default', 'r');
    expect(job.status).toMatchObject({ phase: 'Running', shape: { ps: 2, workers: 3 }, restarts: 1 });
    expect(job.status?.conditions?.find((c) => c.type === 'Checkpointed')).toMatchObject({
      status: 'True',
      reason: 'CheckpointLine',
    });
    expect(ourPods(cluster, 'r').map((p) => envOf(p).DMLC_NUM_WORKER)).toEqual(Array(6).fill('3'));
    // The waits read the pod informer's cache and wake on its events: the only pod list of the
    // whole resize is the one that confirms the old set is gone (no list every poll period).
    const lists = cluster.double.requests
      .slice(mark)
      .filter((q) => q.resource === 'pods' && q.verb === 'list' && q.user === CONTROLLER_TOKEN);
    expect(lists).toHaveLength(1);
  });

  it('an abort stops a rollout at its next step: the half-started set goes, the status says so', async () => {
    await setup({ neverStart: (pod) => String(pod.metadata.name).startsWith('stuck-') });
    await cluster.submit({ name: 'stuck' });
    const abort = new AbortController();
    const running = backend.executor.execute(
      {
        actions: [
          {
            kind: 'start',
            jobId: 'default/stuck',
            shape: { ps: 1, workers: 1 },
            placement: place(['gpu-1'], ['gpu-1']),
          },
        ],
      },
      { signal: abort.signal },
    );
    await until(() => ourPods(cluster, 'stuck').length === 3);
    abort.abort(new Error('rollout did not confirm within 1 s'));
    const r = await running;
    expect(r.applied).toEqual([]);
    expect(r.failed[0]?.error).toMatch(/Aborted: rollout did not confirm within 1 s/);
    expect(ourPods(cluster, 'stuck')).toEqual([]);
    const job = await cluster.job('default', 'stuck');
    expect(job.status?.phase).toBe('Suspended');
    expect(job.status?.conditions?.find((c) => c.type === 'RolloutFailed')).toMatchObject({
      reason: 'Aborted',
    });
    // An aborted signal stops a plan before its first step: nothing is written.
    const mark = cluster.double.requests.length;
    const late = await backend.executor.execute(
      { actions: [{ kind: 'suspend', jobId: 'default/stuck', reason: 'x' }] },
      { signal: abort.signal },
    );
    expect(late.failed[0]?.error).toBe('rollout did not confirm within 1 s');
    expect(
      cluster.double.requests
        .slice(mark)
        .filter((q) => q.verb !== 'get' && q.verb !== 'list' && q.verb !== 'watch'),
    ).toEqual([]);
  });

  it('a rollout whose image cannot be pulled leaves no pods and a RolloutFailed condition', async () => {
    await setup({ badImage: (i) => i.includes('typo') });
    await cluster.submit({ name: 'bad', image: 'mxnet/pyhton:typo' });
    const r = await backend.executor.execute({
      actions: [
        {
          kind: 'start',
          jobId: 'default/bad',
          shape: { ps: 1, workers: 2 },
          placement: place(['gpu-1'], ['gpu-1', 'gpu-2']),
        },
      ],
    });
    expect(r.failed[0]?.error).toMatch(/ErrImagePull/);
    await until(() => ourPods(cluster, 'bad').length === 0);
    const job = await cluster.job('default', 'bad');
    expect(job.status?.phase).toBe('Suspended');
    expect(job.status?.conditions?.find((c) => c.type === 'RolloutFailed')).toMatchObject({
      status: 'True',
      reason: 'ErrImagePull',
    });
  });

  it('an unschedulable resize rolls back to the previous shape, with a condition, never a half job', async () => {
    await setup();
    await cluster.submit({ name: 'big', workerDemand: { cpu: 4, memory: 8 * GiB } });
    await backend.executor.execute({
      actions: [
        {
          kind: 'start',
          jobId: 'default/big',
          shape: { ps: 1, workers: 1 },
          placement: place(['gpu-1'], ['gpu-2']),
        },
      ],
    });
    const r = await backend.executor.execute({
      actions: [
        {
          kind: 'resize',
          jobId: 'default/big',
          from: { ps: 1, workers: 1 },
          shape: { ps: 1, workers: 2 },
          placement: place(['gpu-1'], ['gpu-2', 'small']),
        },
      ],
    });
    expect(r.failed[0]?.error).toMatch(/Unschedulable.*rolled back/);
    const pods = ourPods(cluster, 'big').filter((p) => !p.metadata?.deletionTimestamp);
    expect(pods.map((p) => [p.metadata?.name, p.spec?.nodeName, p.status?.phase]).sort()).toEqual([
      ['big-ps-0', 'gpu-1', 'Running'],
      ['big-scheduler-0', 'gpu-1', 'Running'],
      ['big-worker-0', 'gpu-2', 'Running'],
    ]);
    const job = await cluster.job('default', 'big');
    expect(job.status).toMatchObject({ phase: 'Running', shape: { ps: 1, workers: 1 } });
    expect(job.status?.conditions?.find((c) => c.type === 'RolloutFailed')).toMatchObject({
      status: 'True',
      reason: 'Unschedulable',
    });
  });

  it('completes when all workers exit 0: status first, then the pods; JCT recorded', async () => {
    await setup();
    await cluster.submit({ name: 'done' });
    await backend.executor.execute({
      actions: [
        {
          kind: 'start',
          jobId: 'default/done',
          shape: { ps: 1, workers: 2 },
          placement: place(['gpu-1'], ['gpu-1', 'gpu-2']),
        },
      ],
    });
    cluster.fake.exit('default', 'done-worker-0', 0);
    await until(
      () =>
        backend
          .observe()
          .jobs.get('default/done')
          ?.tasks.some((t) => t.state === 'succeeded') === true,
    );
    expect(backend.observe().jobs.get('default/done')).toMatchObject({ exited: null, finished: null });
    cluster.fake.exit('default', 'done-worker-1', 0);
    const mark = cluster.double.requests.length;
    const { end, result } = await finishExited(backend, 'default/done');
    expect(end).toMatchObject({ outcome: 'succeeded', reason: 'WorkersSucceeded' });
    expect(result.failed).toEqual([]);
    const writes = cluster.double.requests
      .slice(mark)
      .filter((q) => q.verb === 'delete' || q.resource === 'optimusjobs/status');
    // The end is recorded before anything is deleted: a crash in between strands nothing.
    expect(writes[0]?.resource).toBe('optimusjobs/status');
    expect(writes.filter((q) => q.verb === 'delete').map((q) => q.path.split('/').at(-1))).toEqual([
      'done-scheduler-0',
      'done-ps-0',
      'done-worker-0',
      'done-worker-1',
    ]);
    expect(
      writes.filter((q) => q.verb === 'delete').every((q) => q.query.includes('gracePeriodSeconds=0')),
    ).toBe(true);
    const job = await cluster.job('default', 'done');
    expect(job.status).toMatchObject({ phase: 'Succeeded', completionTime: expect.any(String) });
    expect(job.status?.jctSeconds).toBeGreaterThanOrEqual(0);
    expect(ourPods(cluster, 'done')).toEqual([]);
    await until(() => backend.observe().jobs.get('default/done')?.finished?.reason === 'WorkersSucceeded');
    // Finish is idempotent: a repeat keeps the first completion time and writes nothing new.
    const again = await backend.executor.execute({
      actions: [{ kind: 'finish', jobId: 'default/done', ...end, checkpoint: false }],
    });
    expect(again.failed).toEqual([]);
    expect((await cluster.job('default', 'done')).status?.completionTime).toBe(job.status?.completionTime);
    // And nothing starts it again.
    const restart = await backend.executor.execute({
      actions: [
        {
          kind: 'start',
          jobId: 'default/done',
          shape: { ps: 1, workers: 1 },
          placement: place(['gpu-1'], ['gpu-1']),
        },
      ],
    });
    expect(restart.failed[0]?.error).toMatch(/has finished/);
    expect(ourPods(cluster, 'done')).toEqual([]);
  });

  it('reports the cluster view: allocatable minus requests of pods that are not ours', async () => {
    await setup({ namespaces: ['other'] });
    await cluster.clients.core.createNamespacedPod({
      namespace: 'other',
      body: {
        metadata: { name: 'web' },
        spec: {
          nodeName: 'gpu-2',
          containers: [
            { name: 'w', image: 'nginx', resources: { requests: { cpu: '1500m', memory: '1Gi' } } },
          ],
        },
      },
    });
    await cluster.submit({ name: 'ours' });
    await backend.executor.execute({
      actions: [
        {
          kind: 'start',
          jobId: 'default/ours',
          shape: { ps: 1, workers: 1 },
          placement: place(['gpu-2'], ['gpu-2']),
        },
      ],
    });
    await until(() => backend.servers().find((s) => s.name === 'gpu-2')?.reserved['cpu'] === 1.5);
    // Labels come along: the policy matches them against the jobs' pod templates.
    const host = (name: string) => ({ labels: { 'kubernetes.io/hostname': name } });
    expect(backend.servers()).toEqual([
      {
        name: 'gpu-1',
        capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 4 },
        reserved: {},
        ...host('gpu-1'),
      },
      {
        name: 'gpu-2',
        capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 4 },
        reserved: { cpu: 1.5, memory: GiB },
        ...host('gpu-2'),
      },
      { name: 'small', capacity: { cpu: 2, memory: 4 * GiB }, reserved: {}, ...host('small') },
    ]);
  });
});
