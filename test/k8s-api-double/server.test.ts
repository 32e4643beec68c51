import { readFileSync } from 'node:fs';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import { API_VERSION, VERSION } from '../../controller/src/k8s/api/names';
import { replicaSpecs } from '../../controller/src/k8s/testing';
import type { ApiDouble } from './server';
import { startApiDouble } from './server';

const CRD = parse(
  readFileSync(new URL('../../charts/optimus/files/optimusjob-crd.yaml', import.meta.url), 'utf8'),
) as Record<string, unknown>;

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '100m' } } }] },
});

const codeOf = async (p: Promise<unknown>): Promise<number> => {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
};

const validJob = (name: string) => ({
  apiVersion: API_VERSION,
  kind: 'OptimusJob',
  metadata: { name },
  spec: {
    mode: 'sync',
    replicaSpecs: replicaSpecs({ cpu: '2', memory: '4Gi' }, { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': 1 }),
    batchSize: 128,
    convergence: { threshold: 0.02, patience: 3, stepsPerEpoch: 500 },
    scaling: { minPs: 1, maxPs: 8, minWorkers: 1, maxWorkers: 16 },
  },
});

describe('Kubernetes API double, through @kubernetes/client-node', () => {
  let double: ApiDouble;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  beforeEach(async () => {
    double = await startApiDouble({ bookmarkIntervalMs: 50, namespaces: ['ns'] });
    const kc = kubeConfigFor(double.url);
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
  });
  afterEach(async () => double.close());

  it('creates, reads, lists by label, and 404s on unknown names', async () => {
    const created = await core.createNamespacedPod({ namespace: 'ns', body: pod('a', { app: 'x' }) });
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.metadata?.namespace).toBe('ns');
    await core.createNamespacedPod({ namespace: 'ns', body: pod('b', { app: 'y' }) });
    const list = await core.listNamespacedPod({ namespace: 'ns', labelSelector: 'app in (x,z)' });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['a']);
    expect(await codeOf(core.readNamespacedPod({ namespace: 'ns', name: 'nope' }))).toBe(404);
    expect(await codeOf(core.createNamespacedPod({ namespace: 'ns', body: pod('a') }))).toBe(409);
  });

  it('rejects a stale PUT with 409 and accepts the fresh one', async () => {
    const a = await core.createNamespacedConfigMap({
      namespace: 'ns',
      body: { metadata: { name: 'c' }, data: { k: '1' } },
    });
    await core.replaceNamespacedConfigMap({ namespace: 'ns', name: 'c', body: { ...a, data: { k: '2' } } });
    expect(
      await codeOf(
        core.replaceNamespacedConfigMap({ namespace: 'ns', name: 'c', body: { ...a, data: { k: '3' } } }),
      ),
    ).toBe(409);
    const now = await core.readNamespacedConfigMap({ namespace: 'ns', name: 'c' });
    expect(now.data).toEqual({ k: '2' });
  });

  it('applies merge patch and JSON patch by content type', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'ns',
      body: { metadata: { name: 'c' }, data: { a: '1', b: '2' } },
    });
    await core.patchNamespacedConfigMap(
      { namespace: 'ns', name: 'c', body: { data: { a: null, c: '3' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.patchNamespacedConfigMap({
      namespace: 'ns',
      name: 'c',
      body: [{ op: 'replace', path: '/data/b', value: '9' }],
    });
    const now = await core.readNamespacedConfigMap({ namespace: 'ns', name: 'c' });
    expect(now.data).toEqual({ b: '9', c: '3' });
    expect(double.requests.filter((r) => r.verb === 'patch').map((r) => r.contentType)).toEqual([
      'application/merge-patch+json',
      'application/json-patch+json',
    ]);
  });

  it('rejects objects that break the Kubernetes schema with 422', async () => {
    const bad = {
      metadata: { name: 'bad' },
      spec: { containers: [{ name: 'm', image: 'x', resources: { requests: { cpu: 'lots' } } }] },
    };
    expect(await codeOf(core.createNamespacedPod({ namespace: 'ns', body: bad }))).toBe(422);
  });

  it('refuses pod specs a real server refuses beyond the schema (ValidatePodSpec), and names the field', async () => {
    // Bodies a typed client would not build: sent as raw JSON, as kubectl or another client could.
    const pod = (spec: Record<string, unknown>) => ({ metadata: { name: 'p' }, spec }) as unknown as V1Pod;
    const c = (over: Record<string, unknown> = {}) => ({ name: 'm', image: 'x', ...over });
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { containers: [c({ volumeMounts: [{ name: 'data', mountPath: '/d' }] })] },
        /volumeMounts\[0\]\.name: Not found: "data"/,
      ],
      [
        {
          volumes: [
            { name: 'v', emptyDir: {} },
            { name: 'v', emptyDir: {} },
          ],
          containers: [c()],
        },
        /volumes\[1\]\.name: Duplicate value/,
      ],
      [{ containers: [c(), c()] }, /containers\[1\]\.name: Duplicate value: "m"/],
      [{ initContainers: [c()], containers: [c()] }, /containers\[0\]\.name: Duplicate value: "m"/],
      [
        {
          volumes: [
            { name: 'a', emptyDir: {} },
            { name: 'b', emptyDir: {} },
          ],
          containers: [
            c({
              volumeMounts: [
                { name: 'a', mountPath: '/x' },
                { name: 'b', mountPath: '/x' },
              ],
            }),
          ],
        },
        /volumeMounts\[1\]\.mountPath: Invalid value: "\/x": must be unique/,
      ],
      [
        {
          containers: [
            c({
              ports: [
                { name: 'p', containerPort: 1 },
                { name: 'p', containerPort: 2 },
              ],
            }),
          ],
        },
        /ports\[1\]\.name: Duplicate value/,
      ],
    ];
    for (const [spec, message] of cases) {
      const err = await core.createNamespacedPod({ namespace: 'ns', body: pod(spec) }).then(
        () => null,
        (e: unknown) => e as { code?: number; body?: unknown },
      );
      expect(err?.code).toBe(422);
      expect((JSON.parse(String(err?.body)) as { message: string }).message).toMatch(message);
    }
    const ok = pod({
      volumes: [{ name: 'a', emptyDir: {} }],
      containers: [
        c({ volumeMounts: [{ name: 'a', mountPath: '/x' }] }),
        c({ name: 'n', volumeMounts: [{ name: 'a', mountPath: '/x' }] }),
      ],
    });
    expect((await core.createNamespacedPod({ namespace: 'ns', body: ok })).metadata?.name).toBe('p');
  });

  it('serves a CRD once created: status subresource, generation, schema validation', async () => {
    const path = { group: 'optimus.dev', version: VERSION, namespace: 'ns', plural: 'optimusjobs' };
    expect(await codeOf(custom.listNamespacedCustomObject(path))).toBe(404);
    double.api.create(
      double.api.resolve('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!,
      undefined,
      CRD,
    );
    const job = (await custom.createNamespacedCustomObject({
      ...path,
      body: validJob('j'),
    })) as KubernetesObject & { status?: unknown };
    expect(job.metadata?.generation).toBe(1);
    // Status through the main endpoint is ignored; through /status it sticks and the generation stays.
    await custom.patchNamespacedCustomObject({
      ...path,
      name: 'j',
      body: [{ op: 'add', path: '/status', value: { phase: 'Running' } }],
    });
    expect(
      ((await custom.getNamespacedCustomObject({ ...path, name: 'j' })) as { status?: unknown }).status,
    ).toBeUndefined();
    await custom.patchNamespacedCustomObjectStatus(
      { ...path, name: 'j', body: { status: { phase: 'Running' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const after = (await custom.getNamespacedCustomObject({ ...path, name: 'j' })) as KubernetesObject & {
      status: { phase: string };
    };
    expect(after.status.phase).toBe('Running');
    expect(after.metadata?.generation).toBe(1);
    const invalid = validJob('bad');
    invalid.spec.batchSize = 0;
    (invalid.spec as Record<string, unknown>)['mode'] = 'sometimes';
    expect(await codeOf(custom.createNamespacedCustomObject({ ...path, body: invalid }))).toBe(422);
  });

  it('streams watch events to an informer', async () => {
    const kc = kubeConfigFor(double.url);
    const informer = makeInformer(kc, '/api/v1/namespaces/ns/pods', () =>
      core.listNamespacedPod({ namespace: 'ns' }),
    );
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add:${p.metadata?.name}`));
    informer.on('delete', (p) => seen.push(`delete:${p.metadata?.name}`));
    await core.createNamespacedPod({ namespace: 'ns', body: pod('first') });
    await informer.start();
    await core.createNamespacedPod({ namespace: 'ns', body: pod('second') });
    await core.deleteNamespacedPod({ namespace: 'ns', name: 'first' });
    await expect.poll(() => seen).toEqual(['add:first', 'add:second', 'delete:first']);
    expect(informer.list().map((p) => p.metadata?.name)).toEqual(['second']);
    await informer.stop();
    expect(double.requests.some((r) => r.verb === 'watch' && r.resource === 'pods')).toBe(true);
  });

  it('lets an informer re-list after its watch resumes from an expired resourceVersion', async () => {
    const kc = kubeConfigFor(double.url);
    const informer = makeInformer(kc, '/api/v1/namespaces/ns/pods', () =>
      core.listNamespacedPod({ namespace: 'ns' }),
    );
    await informer.start();
    await core.createNamespacedPod({ namespace: 'ns', body: pod('one') });
    await expect.poll(() => informer.list().length).toBe(1);
    double.dropWatches();
    double.api.store.remove(double.api.resolve('', 'v1', 'pods')!, 'ns', 'one'); // an event no watch sees
    double.api.store.compact();
    await core.createNamespacedPod({ namespace: 'ns', body: pod('two') });
    await expect.poll(() => informer.list().map((p) => p.metadata?.name)).toEqual(['two']);
    const lists = double.requests.filter((r) => r.verb === 'list' && r.resource === 'pods');
    expect(lists.length).toBeGreaterThanOrEqual(2);
    await informer.stop();
  });

  it('answers a watch from an expired resourceVersion with an ERROR 410 event', async () => {
    await core.createNamespacedPod({ namespace: 'ns', body: pod('x') });
    double.api.store.compact();
    const res = await fetch(`${double.url}/api/v1/namespaces/ns/pods?watch=true&resourceVersion=1`);
    const line = JSON.parse((await res.text()).trim()) as { type: string; object: { code: number } };
    expect(line).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    expect(res.headers.get('content-type')).toBe('application/json');
  });

  it('sends BOOKMARK events when allowed', async () => {
    const ctl = new AbortController();
    const rv = double.api.store.resourceVersion;
    const res = await fetch(
      `${double.url}/api/v1/namespaces/ns/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`,
      { signal: ctl.signal },
    );
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    ctl.abort();
    expect(JSON.parse(new TextDecoder().decode(value as Uint8Array).split('\n')[0]!)).toMatchObject({
      type: 'BOOKMARK',
      object: { metadata: { resourceVersion: rv } },
    });
  });

  it('deletes bound pods gracefully and garbage-collects dependents of a deleted owner', async () => {
    const owner = await core.createNamespacedConfigMap({
      namespace: 'ns',
      body: { metadata: { name: 'owner' } },
    });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! };
    await core.createNamespacedPod({
      namespace: 'ns',
      body: {
        ...pod('bound'),
        metadata: { name: 'bound', ownerReferences: [ref] },
        spec: { ...pod('x').spec, nodeName: 'n1' },
      },
    });
    await core.createNamespacedPod({
      namespace: 'ns',
      body: { ...pod('free'), metadata: { name: 'free', ownerReferences: [ref] } },
    });
    await core.deleteNamespacedConfigMap({ namespace: 'ns', name: 'owner' });
    const left = await core.listNamespacedPod({ namespace: 'ns' });
    expect(left.items.map((p) => [p.metadata?.name, Boolean(p.metadata?.deletionTimestamp)])).toEqual([
      ['bound', true],
    ]);
  });
});
