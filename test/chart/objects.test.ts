/**
 * Every object the chart renders, for every values variant, is valid against the Kubernetes
 * schemas (or, for CRD kinds kubernetes-models does not know, against a hand-written shape check).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureHelm } from './helm';
import { ciValuesFiles, renderChart, type K8sObject } from './render';
import { validateAll, validateObject } from './validate';

beforeAll(() => {
  ensureHelm();
});

const variants = [{ name: 'default values', files: [] as string[] }].concat(
  ciValuesFiles().map((f) => ({ name: f, files: [f] })),
);

const kindsOf = (objs: readonly K8sObject[]): string[] => [...new Set(objs.map((o) => o.kind))].sort();

describe('rendered objects are valid Kubernetes objects', () => {
  it.each(variants)('$name', async ({ files }) => {
    const objects = await renderChart({ valuesFiles: files });
    expect(objects.length).toBeGreaterThan(5);
    expect(validateAll(objects)).toEqual([]);
    // Names are unique per kind and namespace: a clash would make helm install fail.
    const keys = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('renders the expected kinds per variant', async () => {
    const [base, certManager, crdsOff, external, monitoring] = await Promise.all([
      renderChart(),
      renderChart({ valuesFiles: ['ci/cert-manager-values.yaml'] }),
      renderChart({ valuesFiles: ['ci/crds-off-values.yaml'] }),
      renderChart({ valuesFiles: ['ci/external-broker-values.yaml'] }),
      renderChart({ valuesFiles: ['ci/monitoring-values.yaml'] }),
    ]);
    expect(kindsOf(base)).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'CustomResourceDefinition',
      'Deployment',
      'MutatingWebhookConfiguration',
      'NetworkPolicy',
      'PersistentVolumeClaim',
      'Pod',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Secret',
      'Service',
      'ServiceAccount',
    ]);
    expect(kindsOf(certManager)).toContain('Certificate');
    expect(kindsOf(certManager)).toContain('Issuer');
    expect(kindsOf(crdsOff)).not.toContain('CustomResourceDefinition');
    expect(kindsOf(crdsOff)).not.toContain('PodDisruptionBudget');
    expect(external.filter((o) => o.kind === 'Deployment')).toHaveLength(1);
    expect(kindsOf(external)).not.toContain('ConfigMap');
    expect(kindsOf(monitoring)).toContain('ServiceMonitor');
    expect(kindsOf(monitoring)).toContain('PersistentVolumeClaim');
  });
});

describe('the validator itself rejects broken objects', () => {
  const meta = { name: 'x', namespace: 'ns' };
  const cases: { name: string; obj: K8sObject; error: string }[] = [
    {
      name: 'bad quantity in a Deployment',
      obj: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta,
        spec: {
          selector: {},
          template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: 'lots' } } }] } },
        },
      },
      error: 'quantity',
    },
    {
      name: 'string replicas',
      obj: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta,
        spec: { replicas: 'two', selector: {}, template: { spec: { containers: [{ name: 'c' }] } } },
      },
      error: 'replicas must be integer',
    },
    {
      name: 'webhook without sideEffects',
      obj: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'x' },
        webhooks: [{ name: 'a.b.c', admissionReviewVersions: ['v1'], clientConfig: {} }],
      },
      error: 'sideEffects',
    },
    {
      name: 'unknown kind',
      obj: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta },
      error: 'no validator',
    },
    {
      name: 'Certificate without dnsNames',
      obj: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: meta,
        spec: { secretName: 's', issuerRef: { name: 'i' } },
      },
      error: 'dnsNames',
    },
    {
      name: 'Issuer with two types',
      obj: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: meta,
        spec: { selfSigned: {}, ca: {} },
      },
      error: 'exactly one issuer type',
    },
    {
      name: 'ServiceMonitor without endpoints',
      obj: {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: meta,
        spec: { selector: { matchLabels: {} } },
      },
      error: 'endpoints',
    },
  ];

  it.each(cases)('$name', ({ obj, error }) => {
    const problems = validateObject(obj);
    expect(problems.join('\n')).toContain(error);
  });
});
