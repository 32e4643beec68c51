/**
 * Secure by default, against an API double that enforces RBAC with the chart's own rendered roles
 * (issue 28): the controller writes only in the namespaces the chart binds it in (labelled
 * `optimus.dev/jobs=enabled`), tells a job elsewhere why it does not run, refuses pods that break the
 * Pod Security baseline (naming the field, in a condition and an Event), refuses jobs in its own
 * namespace — and is never answered 403, because it never tries what it is not granted.
 */
import { RbacAuthorizationV1Api, type V1RoleBinding } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import { ensureHelm } from '../chart/helm';
import { NAMESPACE, renderChart, type K8sObject } from '../chart/render';
import { CONTROLLER_TOKEN, startRun, until } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';

const GiB = 1024 ** 3;
let rbac: K8sObject[];
let mlBinding: K8sObject;
let serviceAccount: string;
beforeAll(async () => {
  ensureHelm();
  const objs = await renderChart();
  rbac = objs.filter((o) => ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind));
  serviceAccount = `${NAMESPACE}/${objs.find((o) => o.kind === 'ServiceAccount')!.metadata.name}`;
  // What `helm upgrade` renders once `ml` carries the label: the jobs role bound there.
  const bound = await renderChart({ set: ['watchNamespaces={ml}'] });
  mlBinding = bound.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'ml')!;
}, 60_000);

let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
  run = broker = cluster = undefined;
});

async function applyRbac(c: TestCluster): Promise<void> {
  const r = c.clients.config.makeApiClient(RbacAuthorizationV1Api);
  for (const o of rbac) {
    const body = o as never;
    if (o.kind === 'ClusterRole') await r.createClusterRole({ body });
    if (o.kind === 'ClusterRoleBinding') await r.createClusterRoleBinding({ body });
    if (o.kind === 'Role') await r.createNamespacedRole({ namespace: o.metadata.namespace!, body });
    if (o.kind === 'RoleBinding')
      await r.createNamespacedRoleBinding({ namespace: o.metadata.namespace!, body });
  }
}

async function enable(c: TestCluster, ns: string): Promise<void> {
  const cur = await c.clients.core.readNamespace({ name: ns });
  await c.clients.core.replaceNamespace({
    name: ns,
    body: {
      ...cur,
      metadata: { ...cur.metadata, labels: { ...cur.metadata?.labels, 'optimus.dev/jobs': 'enabled' } },
    },
  });
  const binding = structuredClone(mlBinding) as unknown as V1RoleBinding;
  binding.metadata = { ...binding.metadata, namespace: ns };
  await c.clients.config
    .makeApiClient(RbacAuthorizationV1Api)
    .createNamespacedRoleBinding({ namespace: ns, body: binding });
}

const condition = async (c: TestCluster, ns: string, name: string) =>
  (await c.job(ns, name)).status?.conditions?.find((x) => x.type === 'Invalid');
const podsOf = (c: TestCluster, ns: string, job: string) =>
  c.pods(ns).filter((p) => p.metadata?.labels?.['optimus.dev/job'] === job);

describe('job namespaces, pod security and RBAC, as the chart grants them', () => {
  it('runs jobs only where enabled, refuses unsafe pods and its own namespace, and is never refused', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 64, memory: 256 * GiB } }], {
      namespaces: ['ml', 'payments'],
      rbac: new Map([[CONTROLLER_TOKEN, serviceAccount]]),
    });
    const c = cluster;
    await applyRbac(c);
    await enable(c, 'ml');
    broker = await startEmbeddedBroker(0);
    run = await startRun(c, broker.url, {
      env: { OPTIMUS_NAMESPACE_SELECTOR: 'optimus.dev/jobs=enabled', POD_NAMESPACE: NAMESPACE },
    });

    await c.submit({ name: 'ok', namespace: 'ml' });
    await c.submit({ name: 'elsewhere', namespace: 'payments' });
    await c.submit({ name: 'host', namespace: 'ml', podSpec: { worker: { hostNetwork: true } } });
    await c.submit({ name: 'home', namespace: NAMESPACE });

    await until(() => podsOf(c, 'ml', 'ok').some((p) => p.status?.phase === 'Running'), 20_000);
    await until(
      async () => (await condition(c, 'payments', 'elsewhere'))?.reason === 'NamespaceNotEnabled',
      10_000,
    );
    await until(async () => (await condition(c, 'ml', 'host'))?.reason === 'PodSecurity', 10_000);
    await until(async () => (await c.job(NAMESPACE, 'home')).status?.phase === 'Failed', 10_000);

    expect((await condition(c, 'payments', 'elsewhere'))?.message).toContain(
      'kubectl label namespace payments',
    );
    expect((await condition(c, 'ml', 'host'))?.message).toContain(
      'spec.replicaSpecs.Worker.template.spec.hostNetwork',
    );
    expect((await condition(c, NAMESPACE, 'home'))?.reason).toBe('ControllerNamespace');
    const events = await c.clients.events.listNamespacedEvent({ namespace: 'ml' });
    expect(events.items.some((e) => e.reason === 'Rejected' && e.note?.includes('hostNetwork'))).toBe(true);
    expect(podsOf(c, 'ml', 'host')).toEqual([]);
    expect(podsOf(c, 'payments', 'elsewhere')).toEqual([]);
    expect(podsOf(c, NAMESPACE, 'home')).toEqual([]);

    // Enabled later (labelled, bound at the next upgrade): the job runs and no longer says it is invalid.
    await enable(c, 'payments');
    await until(() => podsOf(c, 'payments', 'elsewhere').some((p) => p.status?.phase === 'Running'), 20_000);
    await until(async () => (await condition(c, 'payments', 'elsewhere'))?.status === 'False', 10_000);

    const refused = c.double.requests.filter((r) => r.user === CONTROLLER_TOKEN && r.status === 403);
    expect(refused.map((r) => `${r.verb} ${r.resource} ${r.namespace ?? ''}`)).toEqual([]);
  }, 90_000);

  it('the double refuses what the chart does not grant (a pod in a namespace not enabled)', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 8, memory: 32 * GiB } }], {
      namespaces: ['payments'],
      rbac: new Map([[CONTROLLER_TOKEN, serviceAccount]]),
    });
    await applyRbac(cluster);
    const { makeClients } = await import('../../controller/src/k8s/api/clients');
    const { kubeConfigFor } = await import('../../controller/src/k8s/api/kube-config');
    const asController = makeClients(kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN));
    const create = asController.core.createNamespacedPod({
      namespace: 'payments',
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    await expect(create).rejects.toMatchObject({ code: 403 });
    const secrets = asController.core.listNamespacedSecret({ namespace: 'payments' });
    await expect(secrets).rejects.toMatchObject({ code: 403 });
    // What it is granted cluster-wide still works: reading pods everywhere.
    await expect(asController.core.listPodForAllNamespaces()).resolves.toBeDefined();
  });
});
