/**
 * Upgrades keep the webhook CA/certificate and the broker passwords: the chart looks up the
 * existing Secrets. Helm renders here against a fake API server (discovery + the Secrets of a
 * first install), exactly as `helm upgrade` would evaluate `lookup` on a cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApi, type FakeApi } from './fake-discovery-api';
import { CHART_DIR, ensureHelm, runHelm } from './helm';
import { NAMESPACE, RELEASE, findObject, parseManifests, renderChart, type K8sObject } from './render';

const SECRETS = ['optimus-webhook-tls', 'optimus-broker-controller', 'optimus-controller-api-token'];

let api: FakeApi;
let firstInstall: K8sObject[];
beforeAll(async () => {
  ensureHelm();
  api = await startFakeApi();
  firstInstall = await renderChart();
});
afterAll(async () => {
  await api.close();
});

/** `helm template --dry-run=server`: templates see the fake cluster through `lookup`. */
async function renderAgainstCluster(): Promise<K8sObject[]> {
  const args = [
    'template',
    RELEASE,
    CHART_DIR,
    '-n',
    NAMESPACE,
    '--dry-run=server',
    '--disable-openapi-validation',
  ];
  const r = await runHelm(args, { KUBECONFIG: api.kubeconfig });
  if (r.code !== 0) throw new Error(r.stderr);
  return parseManifests(r.stdout);
}
const data = (objs: readonly K8sObject[], name: string): Record<string, string> =>
  findObject(objs, 'Secret', name)['data'] as Record<string, string>;
const caBundle = (objs: readonly K8sObject[]): string =>
  (
    findObject(objs, 'MutatingWebhookConfiguration')['webhooks'] as { clientConfig: { caBundle: string } }[]
  )[0]!.clientConfig.caBundle;
/** Serves the Secrets as a cluster holds them after `helm install`: with Helm's ownership annotations. */
const serve = (objs: readonly K8sObject[]): void => {
  api.secrets.clear();
  for (const name of SECRETS) {
    const s = findObject(objs, 'Secret', name);
    const annotations = {
      ...s.metadata.annotations,
      'meta.helm.sh/release-name': RELEASE,
      'meta.helm.sh/release-namespace': NAMESPACE,
    };
    api.secrets.set(`${NAMESPACE}/${name}`, { ...s, metadata: { ...s.metadata, annotations } });
  }
};

describe('upgrade keeps generated secrets (lookup)', () => {
  it('without existing Secrets, a render against the cluster generates new ones', async () => {
    api.secrets.clear();
    const fresh = await renderAgainstCluster();
    expect(data(fresh, 'optimus-webhook-tls')['ca.crt']).not.toBe(
      data(firstInstall, 'optimus-webhook-tls')['ca.crt'],
    );
    expect(data(fresh, 'optimus-broker-controller')['password']).not.toBe(
      data(firstInstall, 'optimus-broker-controller')['password'],
    );
    expect(data(fresh, 'optimus-controller-api-token')['token']).not.toBe(
      data(firstInstall, 'optimus-controller-api-token')['token'],
    );
  });

  it('reuses the CA, certificate and broker passwords of the installed release', async () => {
    serve(firstInstall);
    const upgraded = await renderAgainstCluster();
    for (const name of SECRETS) expect(data(upgraded, name)).toEqual(data(firstInstall, name));
    expect(caBundle(upgraded)).toBe(data(firstInstall, 'optimus-webhook-tls')['ca.crt']);
  });

  it('issues a new certificate when the existing one was made for another Service name', async () => {
    const stale = structuredClone(firstInstall).map((o) =>
      o.kind === 'Secret' && o.metadata.name === 'optimus-webhook-tls'
        ? {
            ...o,
            metadata: {
              ...o.metadata,
              annotations: { 'optimus.dev/webhook-service': 'old.optimus-system.svc' },
            },
          }
        : o,
    );
    serve(stale);
    const upgraded = await renderAgainstCluster();
    expect(data(upgraded, 'optimus-webhook-tls')['ca.crt']).not.toBe(
      data(firstInstall, 'optimus-webhook-tls')['ca.crt'],
    );
    expect(caBundle(upgraded)).toBe(data(upgraded, 'optimus-webhook-tls')['ca.crt']);
    expect(data(upgraded, 'optimus-broker-controller')).toEqual(
      data(firstInstall, 'optimus-broker-controller'),
    );
  });
});

describe('job namespaces chosen by label (lookup at install and upgrade)', () => {
  const ns = (name: string, labels: Record<string, string> = {}): K8sObject => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels },
  });

  it('binds the controller’s writes in the labelled namespaces only, never its own, and the webhook follows', async () => {
    api.secrets.clear();
    api.namespaces.clear();
    for (const n of [
      ns('ml', { 'optimus.dev/jobs': 'enabled' }),
      ns('research', { 'optimus.dev/jobs': 'enabled', team: 'r' }),
      ns('payments'),
      ns('staging', { 'optimus.dev/jobs': 'disabled' }),
      ns(NAMESPACE, { 'optimus.dev/jobs': 'enabled' }),
    ])
      api.namespaces.set(n.metadata.name, n);
    const objs = await renderAgainstCluster();
    const bindings = objs.filter(
      (o) => o.kind === 'RoleBinding' && (o['roleRef'] as { name: string }).name.endsWith('-jobs'),
    );
    expect(bindings.map((b) => b.metadata.namespace).sort()).toEqual(['ml', 'research']);
    const hook = (
      findObject(objs, 'MutatingWebhookConfiguration')['webhooks'] as {
        namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
      }[]
    )[0]!;
    const allowed = hook.namespaceSelector.matchExpressions.find((e) => e.operator === 'In');
    expect(allowed?.values).toEqual(['ml', 'research']);
    api.namespaces.clear();
  });

  it('with no namespace enabled yet, binds nothing and injects nowhere', async () => {
    api.namespaces.clear();
    const objs = await renderAgainstCluster();
    expect(
      objs.filter(
        (o) => o.kind === 'RoleBinding' && (o['roleRef'] as { name: string }).name.endsWith('-jobs'),
      ),
    ).toEqual([]);
  });
});
