/**
 * The NetworkPolicies the chart renders by default (issue 28): the controller's API and /metrics only
 * from this release's pods and the peers the values name, its webhook port open (the API server's
 * address is not known); the bundled broker only from the release and from training pods.
 * Enforcement is the CNI's: here, that the rendered policies say exactly that.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureHelm } from './helm';
import { RELEASE, findObject, renderChart, type K8sObject } from './render';

interface Rule {
  ports?: { port: string | number }[];
  from?: Record<string, unknown>[];
}
const ingress = (o: K8sObject) => (o['spec'] as { ingress: Rule[] }).ingress;
const rulesFor = (o: K8sObject, port: string) =>
  ingress(o).filter((r) => r.ports?.some((p) => p.port === port));

let base: K8sObject[];
beforeAll(async () => {
  ensureHelm();
  base = await renderChart();
});

describe('network policies', () => {
  it('lets only the release and named peers reach the controller API; the webhook port stays open', async () => {
    const np = findObject(base, 'NetworkPolicy', '-controller');
    expect((np['spec'] as { policyTypes: string[] }).policyTypes).toEqual(['Ingress']);
    const [api] = rulesFor(np, 'http');
    expect(api?.from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': RELEASE } } }]);
    const [hook] = rulesFor(np, 'webhook');
    expect(hook?.from).toBeUndefined();
    const monitoring = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    };
    const objs = await renderChart({
      set: [
        'networkPolicy.apiFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring',
      ],
    });
    expect(rulesFor(findObject(objs, 'NetworkPolicy', '-controller'), 'http')[0]?.from).toContainEqual(
      monitoring,
    );
  });

  it('lets only the release and training pods reach the broker', () => {
    const np = findObject(base, 'NetworkPolicy', '-mosquitto');
    const [mqtt] = rulesFor(np, 'mqtt');
    expect(mqtt?.from).toEqual([
      { podSelector: { matchLabels: { 'app.kubernetes.io/instance': RELEASE } } },
      {
        namespaceSelector: {},
        podSelector: { matchExpressions: [{ key: 'optimus.dev/job', operator: 'Exists' }] },
      },
    ]);
    expect(ingress(np)).toHaveLength(1);
  });

  it('can be turned off, and renders no broker policy with an external broker', async () => {
    const off = await renderChart({ set: ['networkPolicy.enabled=false'] });
    expect(off.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
    const external = await renderChart({ valuesFiles: ['ci/external-broker-values.yaml'] });
    expect(external.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name)).toEqual([
      `${RELEASE}-controller`,
    ]);
  });
});
