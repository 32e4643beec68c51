/**
 * Sidecar credentials reach every job namespace without anyone copying Secrets: against the API
 * double, through the composition root (`optimus kubernetes run`) and the distributor alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../controller/src/config/env';
import {
  CredentialsDistributor,
  LABEL_COPIED_FROM,
  startCredentialsSync,
} from '../../controller/src/k8s/broker/credentials';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import { runKubernetes } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { CONTROLLER_TOKEN, until } from './backend-fixture';

const GiB = 1024 ** 3;
const SECRET = 'optimus-broker-sidecar';
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
  run = broker = cluster = undefined;
});

const source = (c: TestCluster, password: string) =>
  c.clients.core.createNamespacedSecret({
    namespace: 'optimus-system',
    body: { metadata: { name: SECRET }, stringData: { username: 'sidecar', password } },
  });
const copyIn = (c: TestCluster, ns: string) =>
  c.clients.core.readNamespacedSecret({ namespace: ns, name: SECRET });

describe('sidecar credentials in job namespaces', () => {
  it('are copied into a job namespace before the job reaches the runtime, by `kubernetes run`', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } }], {
      namespaces: ['ml'],
    });
    await source(cluster, 's3cret');
    broker = await startEmbeddedBroker(0);
    run = await runKubernetes({
      cfg: loadConfig({
        OPTIMUS_BROKER_URL: broker.url,
        OPTIMUS_HTTP_PORT: '0',
        // These tests are about scheduling, not the API's token (test/k8s/api-token.test.ts is).
        OPTIMUS_API_INSECURE_NO_TOKEN: 'true',
        POD_NAME: 'controller-0',
        POD_NAMESPACE: 'optimus-system',
        OPTIMUS_SCHEDULING_INTERVAL_SEC: '3600',
        OPTIMUS_LOG_LEVEL: 'silent',
        OPTIMUS_SIDECAR_CREDENTIALS_SECRET: SECRET,
        OPTIMUS_CREDENTIALS_SOURCE: SECRET,
      }),
      kubeConfig: kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN),
    });
    await cluster.submit({ name: 'cifar', namespace: 'ml' });
    await until(() => cluster!.pods('ml').length > 0, 15_000);
    const copy = await copyIn(cluster, 'ml');
    expect(copy.metadata?.labels?.[LABEL_COPIED_FROM]).toBe('optimus-system');
    expect(Buffer.from(copy.data?.['password'] ?? '', 'base64').toString()).toBe('s3cret');
    // The copy was written before the first pod of the job was created.
    const reqs = cluster.double.requests;
    const secretAt = reqs.findIndex(
      (r) => r.resource === 'secrets' && r.verb === 'create' && r.namespace === 'ml',
    );
    const podAt = reqs.findIndex((r) => r.resource === 'pods' && r.verb === 'create' && r.namespace === 'ml');
    expect(secretAt).toBeGreaterThanOrEqual(0);
    expect(secretAt).toBeLessThan(podAt);
  });

  it('keeps copies in sync, leaves a Secret it did not create alone, and does nothing as a follower', async () => {
    cluster = await startTestCluster([], { namespaces: ['a', 'b', 'c'] });
    await source(cluster, 'one');
    await cluster.clients.core.createNamespacedSecret({
      namespace: 'c',
      body: { metadata: { name: SECRET }, stringData: { username: 'mine', password: 'mine' } },
    });
    const distributor = new CredentialsDistributor({
      clients: cluster.clients,
      sourceNamespace: 'optimus-system',
      sourceName: SECRET,
      targetName: SECRET,
    });
    let leader = false;
    const errors: string[] = [];
    const sync = startCredentialsSync({
      distributor,
      namespaces: () => ['a', 'b', 'c'],
      isLeader: () => leader,
      intervalMs: 20,
      recheckEvery: 2,
      onError: (_e, ns) => errors.push(ns),
    });
    try {
      await sync.sync();
      expect(cluster.double.requests.filter((r) => r.resource === 'secrets' && r.namespace === 'a')).toEqual(
        [],
      );
      leader = true;
      await sync.sync();
      for (const ns of ['a', 'b'])
        expect((await copyIn(cluster, ns)).data?.['password']).toBe(Buffer.from('one').toString('base64'));
      expect(errors).toContain('c');
      expect(Buffer.from((await copyIn(cluster, 'c')).data?.['password'] ?? '', 'base64').toString()).toBe(
        'mine',
      );
      // A rotated source reaches the copies on the periodic recheck.
      await cluster.clients.core.replaceNamespacedSecret({
        namespace: 'optimus-system',
        name: SECRET,
        body: { metadata: { name: SECRET }, stringData: { username: 'sidecar', password: 'two' } },
      });
      await until(
        async () =>
          (await copyIn(cluster!, 'b')).data?.['password'] === Buffer.from('two').toString('base64'),
        3000,
      );
    } finally {
      sync.stop();
    }
  });

  it('re-creates a copy the API server will not update in place (the type changed, or it is immutable)', async () => {
    cluster = await startTestCluster([], { namespaces: ['a', 'b'] });
    await source(cluster, 'one');
    const distributor = new CredentialsDistributor({
      clients: cluster.clients,
      sourceNamespace: 'optimus-system',
      sourceName: SECRET,
      targetName: SECRET,
    });
    const labels = { [LABEL_COPIED_FROM]: 'optimus-system' };
    // An earlier copy of another type, and one marked immutable: both refuse an in-place update.
    await cluster.clients.core.createNamespacedSecret({
      namespace: 'a',
      body: {
        metadata: { name: SECRET, labels },
        type: 'kubernetes.io/basic-auth',
        stringData: { username: 'x', password: 'old' },
      },
    });
    await cluster.clients.core.createNamespacedSecret({
      namespace: 'b',
      body: {
        metadata: { name: SECRET, labels },
        immutable: true,
        stringData: { username: 'x', password: 'old' },
      },
    });
    await expect(
      cluster.clients.core.replaceNamespacedSecret({
        namespace: 'a',
        name: SECRET,
        body: { metadata: { name: SECRET, labels }, type: 'Opaque', stringData: { password: 'new' } },
      }),
    ).rejects.toThrow(/immutable/);
    for (const ns of ['a', 'b']) {
      expect(await distributor.ensure(ns)).toBe('updated');
      const copy = await copyIn(cluster, ns);
      expect(copy.type).toBe('Opaque');
      expect(copy.data?.['password']).toBe(Buffer.from('one').toString('base64'));
    }
  });
});
