/**
 * Just enough of a Kubernetes API server for `helm template --dry-run=server`: version, legacy
 * discovery for the kinds the chart renders, and GET of Secrets the test puts in. Helm then
 * evaluates the chart's `lookup` calls against it, which is how an upgrade sees the existing
 * webhook certificate and broker passwords. Nothing else is served (404 Status).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { K8sObject } from './render';

/** groupVersion -> [plural, kind, namespaced] */
const RESOURCES: Record<string, [string, string, boolean][]> = {
  v1: [
    ['secrets', 'Secret', true],
    ['namespaces', 'Namespace', false],
    ['configmaps', 'ConfigMap', true],
    ['services', 'Service', true],
    ['serviceaccounts', 'ServiceAccount', true],
    ['pods', 'Pod', true],
    ['persistentvolumeclaims', 'PersistentVolumeClaim', true],
  ],
  'apps/v1': [['deployments', 'Deployment', true]],
  'policy/v1': [['poddisruptionbudgets', 'PodDisruptionBudget', true]],
  'networking.k8s.io/v1': [['networkpolicies', 'NetworkPolicy', true]],
  'rbac.authorization.k8s.io/v1': [
    ['clusterroles', 'ClusterRole', false],
    ['clusterrolebindings', 'ClusterRoleBinding', false],
    ['roles', 'Role', true],
    ['rolebindings', 'RoleBinding', true],
  ],
  'admissionregistration.k8s.io/v1': [
    ['mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false],
  ],
  'apiextensions.k8s.io/v1': [['customresourcedefinitions', 'CustomResourceDefinition', false]],
};

export interface FakeApi {
  /** Path of a kubeconfig pointing at the server. */
  readonly kubeconfig: string;
  /** Secrets served by GET, keyed `namespace/name`. */
  readonly secrets: Map<string, K8sObject>;
  /** Namespaces served by LIST (`lookup "v1" "Namespace" "" ""`), by name. */
  readonly namespaces: Map<string, K8sObject>;
  close(): Promise<void>;
}

function resourceList(gv: string): unknown {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: gv,
    resources: (RESOURCES[gv] ?? []).map(([name, kind, namespaced]) => ({
      name,
      singularName: '',
      namespaced,
      kind,
      verbs: ['get', 'list', 'create', 'update'],
    })),
  };
}

function route(
  path: string,
  secrets: Map<string, K8sObject>,
  namespaces: Map<string, K8sObject>,
): [number, unknown] {
  if (path === '/api/v1/namespaces')
    return [200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [...namespaces.values()] }];
  if (path === '/version') return [200, { major: '1', minor: '31', gitVersion: 'v1.31.0' }];
  if (path === '/api')
    return [200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] }];
  if (path === '/api/v1') return [200, resourceList('v1')];
  if (path === '/apis') {
    const groups = Object.keys(RESOURCES)
      .filter((gv) => gv.includes('/'))
      .map((gv) => {
        const [name, version] = gv.split('/');
        return {
          name,
          versions: [{ groupVersion: gv, version }],
          preferredVersion: { groupVersion: gv, version },
        };
      });
    return [200, { kind: 'APIGroupList', apiVersion: 'v1', groups }];
  }
  const group = /^\/apis\/(.+)$/.exec(path)?.[1];
  if (group !== undefined && RESOURCES[group] !== undefined) return [200, resourceList(group)];
  const secret = /^\/api\/v1\/namespaces\/([^/]+)\/secrets\/([^/]+)$/.exec(path);
  const found = secret ? secrets.get(`${secret[1]}/${secret[2]}`) : undefined;
  if (found !== undefined) return [200, found];
  return [404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }];
}

export async function startFakeApi(): Promise<FakeApi> {
  const secrets = new Map<string, K8sObject>();
  const namespaces = new Map<string, K8sObject>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const [code, body] = route(new URL(req.url ?? '/', 'http://x').pathname, secrets, namespaces);
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  const dir = mkdtempSync(join(tmpdir(), 'optimus-fake-api-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'fake', user: { token: 'fake' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
      'current-context': 'fake',
    }),
    { mode: 0o600 },
  );
  return {
    kubeconfig,
    secrets,
    namespaces,
    close: () =>
      new Promise<void>((r) =>
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          r();
        }),
      ),
  };
}
