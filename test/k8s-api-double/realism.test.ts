/**
 * The double refuses what a real API server refuses, where a controller would notice: unknown
 * fields, MicroTime precision, immutable pod fields, missing namespaces, watches that end, and a
 * scheduler/kubelet/garbage collector that behave like the real ones.
 */
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  makeInformer,
  V1MicroTime,
} from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import { FakeCluster } from './fake-cluster';
import type { ApiDouble } from './server';
import { startApiDouble } from './server';

const codeOf = async (p: Promise<unknown>): Promise<number> => {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
};
const messageOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return '';
  } catch (err) {
    return err instanceof ApiException ? String((err.body as string) ?? '') : String(err);
  }
};

let double: ApiDouble;
let fake: FakeCluster | undefined;
afterEach(async () => {
  fake?.close();
  fake = undefined;
  await double.close();
});

const start = async (o: Parameters<typeof startApiDouble>[0] = {}) => {
  double = await startApiDouble({ namespaces: ['ml'], ...o });
  const kc = kubeConfigFor(double.url);
  return { core: kc.makeApiClient(CoreV1Api), coordination: kc.makeApiClient(CoordinationV1Api) };
};

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: {
    containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
    ...spec,
  },
});

describe('unknown fields', () => {
  it('are pruned from built-in objects with a Warning header, and refused when Strict', async () => {
    await start();
    const body = { ...pod('p'), spec: { ...pod('p').spec, nodeSelecter: { a: 'b' } } };
    const res = await fetch(`${double.url}/api/v1/namespaces/ml/pods`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 - "unknown field \\"spec.nodeSelecter\\""');
    expect(((await res.json()) as { spec: Record<string, unknown> }).spec['nodeSelecter']).toBeUndefined();
    const strict = await fetch(`${double.url}/api/v1/namespaces/ml/pods?fieldValidation=Strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, metadata: { name: 'q' } }),
    });
    expect(strict.status).toBe(400);
    expect(((await strict.json()) as { message: string }).message).toContain(
      'strict decoding error: unknown field "spec.nodeSelecter"',
    );
  });
});

describe('MicroTime', () => {
  it('refuses a Lease whose times have milliseconds (a plain Date) with 400, accepts microseconds', async () => {
    const { coordination } = await start();
    const lease = (renewTime: Date) => ({
      metadata: { name: 'l' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime, acquireTime: renewTime },
    });
    const refused = coordination.createNamespacedLease({ namespace: 'ml', body: lease(new Date()) });
    expect(await messageOf(refused)).toContain('2006-01-02T15:04:05.000000Z07:00');
    expect(
      await codeOf(coordination.createNamespacedLease({ namespace: 'ml', body: lease(new Date()) })),
    ).toBe(400);
    const ok = await coordination.createNamespacedLease({
      namespace: 'ml',
      body: lease(new V1MicroTime(Date.UTC(2026, 0, 1, 0, 0, 2, 130))),
    });
    expect(String(ok.spec?.renewTime)).toBe('2026-01-01T00:00:02.130000Z');
  });
});

describe('immutable pod fields', () => {
  it('answers 422 to a change of anything but images, and allows an image change', async () => {
    const { core } = await start();
    const created = await core.createNamespacedPod({ namespace: 'ml', body: pod('p') });
    const withCommand = structuredClone(created);
    withCommand.spec!.containers[0]!.command = ['sleep', '1'];
    expect(await codeOf(core.replaceNamespacedPod({ namespace: 'ml', name: 'p', body: withCommand }))).toBe(
      422,
    );
    const moved = structuredClone(created);
    moved.spec!.nodeName = 'elsewhere';
    expect(await messageOf(core.replaceNamespacedPod({ namespace: 'ml', name: 'p', body: moved }))).toContain(
      'pod updates may not change fields',
    );
    const image = structuredClone(created);
    image.spec!.containers[0]!.image = 'busybox:2';
    const updated = await core.replaceNamespacedPod({ namespace: 'ml', name: 'p', body: image });
    expect(updated.spec?.containers[0]?.image).toBe('busybox:2');
  });

  it('keeps 409 for a stale resourceVersion and AlreadyExists for a second create', async () => {
    const { core } = await start();
    const created = await core.createNamespacedPod({ namespace: 'ml', body: pod('p') });
    const newer = structuredClone(created);
    newer.spec!.containers[0]!.image = 'busybox:2';
    await core.replaceNamespacedPod({ namespace: 'ml', name: 'p', body: newer });
    expect(await codeOf(core.replaceNamespacedPod({ namespace: 'ml', name: 'p', body: newer }))).toBe(409);
    expect(await messageOf(core.createNamespacedPod({ namespace: 'ml', body: pod('p') }))).toContain(
      'AlreadyExists',
    );
  });
});

describe('namespaces', () => {
  it('refuses objects in a namespace that does not exist, and deleting one deletes its content', async () => {
    const { core } = await start();
    expect(
      await messageOf(core.createNamespacedSecret({ namespace: 'nope', body: { metadata: { name: 's' } } })),
    ).toContain('namespaces \\"nope\\" not found');
    await core.createNamespace({ body: { metadata: { name: 'team' } } });
    await core.createNamespacedSecret({ namespace: 'team', body: { metadata: { name: 's' } } });
    const ns = await core.readNamespace({ name: 'team' });
    expect(ns.metadata?.labels?.['kubernetes.io/metadata.name']).toBe('team');
    await core.deleteNamespace({ name: 'team' });
    expect(await codeOf(core.readNamespacedSecret({ namespace: 'team', name: 's' }))).toBe(404);
  });
});

describe('watches', () => {
  it('are ended by the server at random; an informer re-watches and misses nothing', async () => {
    const { core } = await start({ watchLifetime: { minMs: 50, maxMs: 150 } });
    const informer = makeInformer(kubeConfigFor(double.url), '/api/v1/namespaces/ml/pods', () =>
      core.listNamespacedPod({ namespace: 'ml' }),
    );
    informer.on('error', () => setTimeout(() => void informer.start(), 10));
    await informer.start();
    for (let i = 0; i < 6; i++) {
      await core.createNamespacedPod({ namespace: 'ml', body: pod(`p${i}`) });
      await new Promise((r) => setTimeout(r, 80));
    }
    await expect.poll(() => informer.list().length, { timeout: 3000 }).toBe(6);
    await informer.stop();
    expect(double.requests.filter((r) => r.verb === 'watch').length).toBeGreaterThan(1);
  });
});

describe('scheduler, kubelet and garbage collector', () => {
  const node = (name: string) => ({ name, alloc: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '1' } });

  const setupCluster = async (o: ConstructorParameters<typeof FakeCluster>[1] = {}) => {
    const { core } = await start();
    fake = new FakeCluster(double.api, o);
    fake.addNode(node('cpu-1').name, { cpu: '4', memory: '8Gi' }, { labels: { pool: 'cpu' } });
    fake.addNode(node('gpu-1').name, node('gpu-1').alloc, {
      labels: { pool: 'gpu' },
      taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }],
    });
    return core;
  };
  const read = (core: CoreV1Api, name: string) => core.readNamespacedPod({ namespace: 'ml', name });
  const until = async (core: CoreV1Api, name: string, ok: (p: V1Pod) => boolean) =>
    expect.poll(async () => ok(await read(core, name)), { timeout: 3000 }).toBe(true);

  it('binds only where required node affinity, taints and requests allow', async () => {
    const core = await setupCluster();
    const pin = (n: string) => ({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n] }] }],
        },
      },
    });
    // Pinned to the tainted GPU node without a toleration: Pending.
    await core.createNamespacedPod({
      namespace: 'ml',
      body: pod('no-toleration', { affinity: pin('gpu-1') }),
    });
    // With the toleration: bound there.
    await core.createNamespacedPod({
      namespace: 'ml',
      body: pod('tolerates', {
        affinity: pin('gpu-1'),
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      }),
    });
    // A selector no node matches: Pending.
    await core.createNamespacedPod({
      namespace: 'ml',
      body: pod('selector', { nodeSelector: { pool: 'tpu' } }),
    });
    await until(core, 'tolerates', (p) => p.spec?.nodeName === 'gpu-1' && p.status?.phase === 'Running');
    await until(core, 'no-toleration', (p) => p.status?.phase === 'Pending');
    const pending = await read(core, 'no-toleration');
    expect(pending.status?.conditions?.[0]).toMatchObject({
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
    });
    expect(pending.status?.conditions?.[0]?.message).toBe(
      "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {nvidia.com/gpu: present}.",
    );
    await until(core, 'selector', (p) => p.status?.phase === 'Pending');
  });

  it('keeps a pod that does not fit Pending and binds it once room frees up', async () => {
    const core = await setupCluster();
    const big = { containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '3' } } }] };
    await core.createNamespacedPod({
      namespace: 'ml',
      body: { metadata: { name: 'a' }, spec: { ...big, nodeSelector: { pool: 'cpu' } } },
    });
    await until(core, 'a', (p) => p.status?.phase === 'Running');
    // An init container larger than the containers sets the floor: 3.5 CPU do not fit next to 3.
    await core.createNamespacedPod({
      namespace: 'ml',
      body: {
        metadata: { name: 'b' },
        spec: {
          nodeSelector: { pool: 'cpu' },
          initContainers: [{ name: 'init', image: 'x', resources: { requests: { cpu: '3500m' } } }],
          containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '100m' } } }],
        },
      },
    });
    await until(core, 'b', (p) => p.status?.phase === 'Pending');
    expect((await read(core, 'b')).status?.conditions?.[0]?.message).toContain('1 Insufficient cpu');
    await core.deleteNamespacedPod({ namespace: 'ml', name: 'a', gracePeriodSeconds: 0 });
    await until(core, 'b', (p) => p.spec?.nodeName === 'cpu-1' && p.status?.phase === 'Running');
  });

  it('honours grace periods: SIGTERM, then the pod goes when its program stops, or is killed at the end', async () => {
    const terms: string[] = [];
    const kills: string[] = [];
    const core = await setupCluster({
      onTerminate: (p) => terms.push(p.metadata.name),
      onKill: (p) => kills.push(p.metadata.name),
      // "stubborn" ignores SIGTERM; the others stop after 20 ms.
      stopDelayMs: (p) => (p.metadata.name === 'stubborn' ? 60_000 : 20),
    });
    for (const name of ['polite', 'stubborn'])
      await core.createNamespacedPod({
        namespace: 'ml',
        body: pod(name, { nodeSelector: { pool: 'cpu' }, terminationGracePeriodSeconds: 1 }),
      });
    for (const name of ['polite', 'stubborn']) await until(core, name, (p) => p.status?.phase === 'Running');
    const t0 = Date.now();
    await core.deleteNamespacedPod({ namespace: 'ml', name: 'polite' });
    await core.deleteNamespacedPod({ namespace: 'ml', name: 'stubborn' });
    expect((await read(core, 'stubborn')).metadata?.deletionTimestamp).toBeDefined();
    await expect.poll(async () => codeOf(read(core, 'polite')), { timeout: 500 }).toBe(404);
    expect(await codeOf(read(core, 'stubborn'))).toBe(200);
    await expect.poll(async () => codeOf(read(core, 'stubborn')), { timeout: 3000 }).toBe(404);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(terms.sort()).toEqual(['polite', 'stubborn']);
    expect(kills).toEqual(['stubborn']);
  });

  it('collects a dependent created after its owner was deleted', async () => {
    const core = await setupCluster();
    const owner = await core.createNamespacedConfigMap({
      namespace: 'ml',
      body: { metadata: { name: 'owner' } },
    });
    await core.deleteNamespacedConfigMap({ namespace: 'ml', name: 'owner' });
    await core.createNamespacedService({
      namespace: 'ml',
      body: {
        metadata: {
          name: 'late',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! },
          ],
        },
        spec: { clusterIP: 'None', ports: [{ port: 1 }] },
      },
    });
    await expect
      .poll(async () => codeOf(core.readNamespacedService({ namespace: 'ml', name: 'late' })))
      .toBe(404);
  });
});
