/**
 * The controller's Deployment, Service, PodDisruptionBudget, ServiceAccount and RBAC as rendered:
 * hardened, highly available, configured through exactly the env-var contract, and with exactly the
 * RBAC rules of the shared list.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../controller/src/config/env';
import { rbacRuleSets, type RbacRule } from '../../controller/src/k8s/api/crd';
import { CHART_DIR, REPO_ROOT, ensureHelm } from './helm';
import { NAMESPACE, findObject, renderChart, type K8sObject } from './render';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  securityContext?: Record<string, unknown>;
  livenessProbe?: { httpGet?: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string } };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: Record<string, unknown>;
  serviceAccountName?: string;
  [k: string]: unknown;
}
type Rule = RbacRule & { readonly resourceNames?: readonly string[] };

const podSpec = (deploy: K8sObject): PodSpec =>
  (deploy['spec'] as { template: { spec: PodSpec } }).template.spec;
const controllerContainer = (objs: readonly K8sObject[]): Container =>
  podSpec(findObject(objs, 'Deployment', '-controller')).containers.find((c) => c.name === 'controller')!;
const envMap = (c: Container): Map<string, EnvVar> => new Map((c.env ?? []).map((e) => [e.name, e]));

/** The variable names documented in docs/controller-config.md (first column of its table). */
function documentedEnvNames(): Set<string> {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'controller-config.md'), 'utf8');
  const names = [...doc.matchAll(/^\|\s*(.+?)\s*\|/gm)].flatMap((m) =>
    [...(m[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((n) => n[1]!),
  );
  return new Set(names);
}

let base: K8sObject[];
beforeAll(async () => {
  ensureHelm();
  base = await renderChart();
});

describe('controller Deployment', () => {
  it('runs 2 replicas with leader election and a PodDisruptionBudget', () => {
    const deploy = findObject(base, 'Deployment', '-controller');
    expect((deploy['spec'] as { replicas: number }).replicas).toBe(2);
    const env = envMap(controllerContainer(base));
    expect(env.get('OPTIMUS_LEADER_ELECTION')?.value).toBe('true');
    const pdb = findObject(base, 'PodDisruptionBudget', '-controller');
    expect(pdb['spec']).toMatchObject({ minAvailable: 1 });
    const podLabels = (deploy['spec'] as { template: { metadata: { labels: Record<string, string> } } })
      .template.metadata.labels;
    const selector = (pdb['spec'] as { selector: { matchLabels: Record<string, string> } }).selector
      .matchLabels;
    expect(podLabels).toMatchObject(selector);
  });

  it('probes /healthz and /readyz on the HTTP port', () => {
    const c = controllerContainer(base);
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.ports).toEqual([
      expect.objectContaining({ name: 'http', containerPort: 8080 }),
      expect.objectContaining({ name: 'webhook', containerPort: 8443 }),
    ]);
  });

  it('is hardened: non-root, read-only root, no privilege escalation, no capabilities, seccomp', () => {
    const spec = podSpec(findObject(base, 'Deployment', '-controller'));
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(controllerContainer(base).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('uses the images with the chart appVersion as tag', () => {
    const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    const c = controllerContainer(base);
    expect(c.image).toBe(`ghcr.io/optimus-scheduler/optimus-controller:${chart.appVersion}`);
    expect(envMap(c).get('OPTIMUS_SIDECAR_IMAGE')?.value).toBe(
      `ghcr.io/optimus-scheduler/optimus-sidecar:${chart.appVersion}`,
    );
  });

  it('sets only variables of the env-var contract (docs/controller-config.md)', () => {
    const documented = documentedEnvNames();
    expect(documented.size).toBeGreaterThan(15);
    const names = [...envMap(controllerContainer(base)).keys()];
    expect(names.filter((n) => !documented.has(n))).toEqual([]);
  });

  it("renders an environment the controller's own config loader accepts", () => {
    const env = Object.fromEntries(
      [...envMap(controllerContainer(base)).values()].map((e) => [
        e.name,
        e.value ?? 'from-secret-or-downward-api',
      ]),
    );
    const cfg = loadConfig(env);
    expect(cfg.sidecarResources).toEqual({
      requests: { cpu: '10m', memory: '48Mi' },
      limits: { memory: '96Mi' },
    });
    expect(cfg.brokerUrl).toBe(`mqtt://optimus-mosquitto.${NAMESPACE}.svc:1883`);
    // The bundled broker has no shared sidecar credential: every job gets its own (ADR 0013).
    expect(cfg.sidecarCredentialsSecret).toBeUndefined();
    expect(cfg.brokerIdentities).toBe('dynsec');
    expect(cfg.brokerProbeJob).toBe('optimus-system/helm-test');
    expect(cfg.leaseName).toBe('optimus-controller');
  });

  it('passes sidecar image, resources and extra settings through values', async () => {
    const objs = await renderChart({
      valuesFiles: ['ci/monitoring-values.yaml'],
      set: ['sidecar.image.tag=1.2.3', 'sidecar.resources.requests.cpu=0.5', 'global.priorityClassName=high'],
    });
    const c = controllerContainer(objs);
    const env = envMap(c);
    expect(env.get('OPTIMUS_SIDECAR_IMAGE')?.value).toBe('ghcr.io/optimus-scheduler/optimus-sidecar:1.2.3');
    expect(JSON.parse(env.get('OPTIMUS_SIDECAR_RESOURCES')!.value!)).toMatchObject({
      requests: { cpu: '0.5' },
    });
    expect(env.get('NODE_OPTIONS')?.value).toBe('--max-old-space-size=384');
    expect(c.args).toEqual(['kubernetes', '--policy=optimus']);
    const spec = podSpec(findObject(objs, 'Deployment', '-controller'));
    expect(spec['priorityClassName']).toBe('high');
    expect(spec['tolerations']).toEqual([expect.objectContaining({ key: 'dedicated' })]);
    expect(findObject(objs, 'PodDisruptionBudget')['spec']).toMatchObject({ maxUnavailable: 1 });
  });
});

describe('controller Service', () => {
  it('exposes the API+metrics on 8080 and the webhook on 443 -> 8443', () => {
    const svc = findObject(base, 'Service', '-controller');
    expect((svc['spec'] as { ports: unknown[] }).ports).toEqual([
      expect.objectContaining({ name: 'http', port: 8080, targetPort: 'http' }),
      expect.objectContaining({ name: 'webhook', port: 443, targetPort: 'webhook' }),
    ]);
    const deploy = findObject(base, 'Deployment', '-controller');
    expect(podSpec(deploy).serviceAccountName).toBe(findObject(base, 'ServiceAccount').metadata.name);
  });
});

describe('ServiceMonitor', () => {
  it('scrapes /metrics on the http port of the controller Service', async () => {
    const objs = await renderChart({ valuesFiles: ['ci/monitoring-values.yaml'] });
    const sm = findObject(objs, 'ServiceMonitor');
    const spec = sm['spec'] as { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] };
    const svc = findObject(objs, 'Service', '-controller');
    expect(svc.metadata.labels).toMatchObject(spec.selector.matchLabels);
    expect(spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    expect(sm.metadata.labels?.['release']).toBe('kube-prometheus-stack');
    expect(base.filter((o) => o.kind === 'ServiceMonitor')).toEqual([]);
  });

  it('sends the API token the controller requires on /metrics, unless metrics are open', async () => {
    const endpoint = async (set: string[] = []): Promise<Record<string, unknown>> =>
      (
        findObject(await renderChart({ valuesFiles: ['ci/monitoring-values.yaml'], set }), 'ServiceMonitor')[
          'spec'
        ] as { endpoints: Record<string, unknown>[] }
      ).endpoints[0]!;
    expect((await endpoint())['authorization']).toEqual({
      type: 'Bearer',
      credentials: { name: 'optimus-controller-api-token', key: 'token' },
    });
    expect((await endpoint(['config.apiToken.metricsOpen=true']))['authorization']).toBeUndefined();
  });
});

describe('the API token', () => {
  const env = (objs: readonly K8sObject[]): EnvVar[] => controllerContainer(objs).env ?? [];
  it('is always required: the chart generates one, or mounts the Secret the user names', async () => {
    const names = env(base).map((e) => e.name);
    expect(names).toContain('OPTIMUS_API_TOKEN_FILE');
    expect(names).not.toContain('OPTIMUS_API_INSECURE_NO_TOKEN');
    expect(names).not.toContain('OPTIMUS_METRICS_OPEN');
    const token = findObject(base, 'Secret', 'optimus-controller-api-token');
    expect(Buffer.from((token['data'] as { token: string }).token, 'base64').toString()).toMatch(
      /^[A-Za-z0-9]{48}$/,
    );
    const own = await renderChart({ set: ['config.apiToken.existingSecret=my-token'] });
    expect(own.filter((o) => o.kind === 'Secret' && o.metadata.name.endsWith('-api-token'))).toEqual([]);
    const volumes = podSpec(findObject(own, 'Deployment', '-controller')).volumes as {
      name: string;
      secret?: { secretName: string };
    }[];
    expect(volumes.find((v) => v.name === 'api-token')?.secret?.secretName).toBe('my-token');
  });

  it('answers to the Service’s short names (Host check)', () => {
    expect(env(base).find((e) => e.name === 'OPTIMUS_HTTP_ALLOWED_HOSTS')?.value).toBe(
      'optimus-controller,optimus-controller.optimus-system',
    );
  });
});

describe('RBAC', () => {
  const key = (r: Rule): string =>
    JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? [], [...r.verbs].sort()]);
  const rulesOf = (objs: readonly K8sObject[], kind: string): Rule[] =>
    objs.filter((o) => o.kind === kind).flatMap((o) => o['rules'] as Rule[]);

  /** The file's rules with the chart's credentials Secret filled in, as the template does. */
  const filled = (rules: readonly RbacRule[]): Rule[] =>
    rules.map((r) => (r.resourceNames ? { ...r, resourceNames: ['optimus-broker-sidecar'] } : r));
  /** Without a shared sidecar Secret (the bundled broker) the template drops the file's secrets rules. */
  const noSecrets = (rules: readonly RbacRule[]): Rule[] =>
    rules.filter((r) => !r.resources.includes('secrets'));
  const external = [
    'broker.external.url=mqtt://broker.example:1883',
    'broker.external.controllerCredentialsSecret=optimus-broker-controller',
    'broker.external.sidecarCredentialsSecret=optimus-broker-sidecar',
  ];

  /** The ClusterRole bound cluster-wide (by the ClusterRoleBinding). */
  const boundClusterRole = (objs: readonly K8sObject[]): Rule[] => {
    const crb = findObject(objs, 'ClusterRoleBinding');
    const name = (crb['roleRef'] as { name: string }).name;
    return objs.find((o) => o.kind === 'ClusterRole' && o.metadata.name === name)!['rules'] as Rule[];
  };
  /** RoleBindings of the `-jobs` ClusterRole: the namespaces where the controller may write. */
  const jobsRoleBindings = (objs: readonly K8sObject[]): K8sObject[] =>
    objs.filter((o) => o.kind === 'RoleBinding' && (o['roleRef'] as { name: string }).name.endsWith('-jobs'));

  it('grants exactly the rules of files/rbac-rules.yaml (the list the controller code uses)', () => {
    // The bundled broker: each job's own Secret (perJobCredentials), no shared one.
    const sets = rbacRuleSets();
    const rendered = [...rulesOf(base, 'ClusterRole'), ...rulesOf(base, 'Role')].map(key).sort();
    expect(rendered).toEqual(
      [...noSecrets([...sets.cluster, ...sets.jobNamespaces, ...sets.home]), ...sets.perJobCredentials]
        .map(key)
        .sort(),
    );
    // By default the writes sit in the `-jobs` ClusterRole, bound in no namespace until one is enabled:
    // the cluster-wide binding holds reads, and an OptimusJob's status and Events, nothing else.
    const bound = boundClusterRole(base);
    expect(bound.map(key).sort()).toEqual(noSecrets(sets.cluster).map(key).sort());
    for (const r of bound)
      expect(
        r.resources.includes('secrets') ||
          r.verbs.some((v) => ['create', 'delete', 'update'].includes(v) && r.resources.includes('pods')),
      ).toBe(false);
    expect(jobsRoleBindings(base)).toEqual([]);
  });

  it('with an external broker, grants the shared sidecar Secret by name instead of per-job Secrets', async () => {
    const objs = await renderChart({ set: external });
    const sets = rbacRuleSets();
    const rendered = [...rulesOf(objs, 'ClusterRole'), ...rulesOf(objs, 'Role')].map(key).sort();
    expect(rendered).toEqual(
      filled([...sets.cluster, ...sets.jobNamespaces, ...sets.home])
        .map(key)
        .sort(),
    );
  });

  it('with watchNamespaces, writes only where jobs run: the jobs role bound in each, reads cluster-wide', async () => {
    const objs = await renderChart({
      set: ['watchNamespaces={ml,research}', 'jobNamespaceSelector=null', ...external],
    });
    const sets = rbacRuleSets();
    const cluster = boundClusterRole(objs);
    expect(cluster.map(key).sort()).toEqual(
      filled(sets.cluster.filter((r) => !r.selectorOnly))
        .map(key)
        .sort(),
    );
    for (const r of cluster)
      expect(
        r.verbs.every((v) => ['get', 'list', 'watch'].includes(v)) ||
          ['optimusjobs/status', 'events'].includes(r.resources[0]!),
      ).toBe(true);
    const bindings = jobsRoleBindings(objs);
    expect(bindings.map((b) => b.metadata.namespace).sort()).toEqual(['ml', 'research']);
    const jobsRole = objs.find((o) => o.kind === 'ClusterRole' && o.metadata.name.endsWith('-jobs'))!;
    expect((jobsRole['rules'] as Rule[]).map(key).sort()).toEqual(filled(sets.jobNamespaces).map(key).sort());
    for (const b of bindings)
      expect(b['roleRef']).toMatchObject({ kind: 'ClusterRole', name: jobsRole.metadata.name });
    const env = envMap(controllerContainer(objs));
    expect(env.get('OPTIMUS_WATCH_NAMESPACES')?.value).toBe('ml,research');
    expect(env.has('OPTIMUS_NAMESPACE_SELECTOR')).toBe(false);
    // The Secret rules name the one credentials Secret: no write to any other Secret.
    for (const r of [...cluster, ...(jobsRole['rules'] as Rule[])])
      if (r.resources.includes('secrets') && !r.verbs.every((v) => v === 'create'))
        expect(r.resourceNames).toEqual(['optimus-broker-sidecar']);
    // The bundled broker: the per-job Secret rules land in the jobs role only, never cluster-wide.
    const bundled = await renderChart({ set: ['watchNamespaces={ml}'] });
    const bundledJobs = bundled.find((o) => o.kind === 'ClusterRole' && o.metadata.name.endsWith('-jobs'))!;
    expect((bundledJobs['rules'] as Rule[]).map(key).sort()).toEqual(
      [...noSecrets(sets.jobNamespaces), ...sets.perJobCredentials].map(key).sort(),
    );
    expect(boundClusterRole(bundled).some((r) => r.resources.includes('secrets'))).toBe(false);
  });

  it('runs jobs where namespaces carry the selector’s labels (the default: optimus.dev/jobs=enabled)', () => {
    const env = envMap(controllerContainer(base));
    expect(env.get('OPTIMUS_NAMESPACE_SELECTOR')?.value).toBe('optimus.dev/jobs=enabled');
    expect(env.has('OPTIMUS_WATCH_NAMESPACES')).toBe(false);
    expect(boundClusterRole(base).some((r) => r.resources.includes('namespaces'))).toBe(true);
  });

  it('grants the writes cluster-wide only with clusterWideJobs', async () => {
    const objs = await renderChart({ set: ['clusterWideJobs=true'] });
    const sets = rbacRuleSets();
    expect(boundClusterRole(objs).map(key).sort()).toEqual(
      [...noSecrets([...sets.cluster, ...sets.jobNamespaces]), ...sets.perJobCredentials].map(key).sort(),
    );
    expect(objs.some((o) => o.kind === 'ClusterRole' && o.metadata.name.endsWith('-jobs'))).toBe(false);
    const env = envMap(controllerContainer(objs));
    expect(env.has('OPTIMUS_NAMESPACE_SELECTOR') || env.has('OPTIMUS_WATCH_NAMESPACES')).toBe(false);
  });

  it('refuses values under which jobs would run nowhere', async () => {
    await expect(renderChart({ set: ['jobNamespaceSelector=null'] })).rejects.toThrow(
      /jobs would run nowhere/,
    );
  });

  it('keeps leases in the release namespace and nodes read-only, with no wildcards', () => {
    const role = findObject(base, 'Role');
    expect(role.metadata.namespace).toBe(NAMESPACE);
    const cluster = rulesOf(base, 'ClusterRole');
    expect(cluster.filter((r) => r.resources.includes('leases'))).toEqual([]);
    for (const r of cluster.filter((x) => x.resources.includes('nodes'))) {
      expect(r.verbs.every((v) => ['get', 'list', 'watch'].includes(v))).toBe(true);
    }
    for (const r of [...cluster, ...rulesOf(base, 'Role')]) {
      expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain('*');
    }
    for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
      const b = findObject(base, kind);
      expect(b['subjects']).toEqual([
        {
          kind: 'ServiceAccount',
          name: findObject(base, 'ServiceAccount').metadata.name,
          namespace: NAMESPACE,
        },
      ]);
    }
  });
});
