/**
 * `helm lint --strict` for the default values and every ci/*-values.yaml, and wrong values refused
 * at install time: by values.schema.json, or by the chart's own consistency checks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR, ensureHelm, runHelm } from './helm';
import { ciValuesFiles, renderYaml, valuesArgs } from './render';

beforeAll(() => {
  ensureHelm();
});

const variants = [{ name: 'default values', files: [] as string[] }].concat(
  ciValuesFiles().map((f) => ({ name: f, files: [f] })),
);

describe('helm lint --strict', () => {
  it('covers the four ci variants (external broker, cert-manager, CRDs off, monitoring)', () => {
    expect(ciValuesFiles()).toEqual([
      'ci/cert-manager-values.yaml',
      'ci/crds-off-values.yaml',
      'ci/external-broker-values.yaml',
      'ci/monitoring-values.yaml',
    ]);
  });

  it.each(variants)('passes for $name', async ({ files }) => {
    const r = await runHelm(['lint', '--strict', CHART_DIR, ...valuesArgs({ valuesFiles: files })]);
    expect(r.stderr + r.stdout).toContain('0 chart(s) failed');
    expect(r.code).toBe(0);
  });
});

describe('wrong values fail at install', () => {
  const cases = [
    { name: 'replicaCount not a number', set: ['replicaCount=abc'], error: '/replicaCount' },
    { name: 'unknown failurePolicy', set: ['webhook.failurePolicy=Maybe'], error: '/webhook/failurePolicy' },
    {
      name: 'webhook timeout above 30 s',
      set: ['webhook.timeoutSeconds=45'],
      error: '/webhook/timeoutSeconds',
    },
    {
      name: 'unknown reinvocationPolicy',
      set: ['webhook.reinvocationPolicy=Always'],
      error: 'reinvocationPolicy',
    },
    { name: 'misspelt top-level key', set: ['replicas=3'], error: "'replicas' not allowed" },
    { name: 'misspelt nested key', set: ['crds.keepp=true'], error: "'keepp' not allowed" },
    {
      name: 'broker URL with http scheme',
      set: ['broker.external.url=http://emqx:1883'],
      error: '/broker/external/url',
    },
    {
      name: 'bad sidecar quantity',
      set: ['sidecar.resources.requests.cpu=lots'],
      error: '/sidecar/resources',
    },
    { name: 'bad image digest', set: ['image.digest=latest'], error: '/image/digest' },
    {
      name: 'two replicas without leader election',
      set: ['leaderElection.enabled=false'],
      error: 'needs leaderElection.enabled=true',
    },
    {
      name: 'external broker without controller credentials',
      set: ['broker.external.url=mqtt://emqx:1883'],
      error: 'controllerCredentialsSecret',
    },
  ];

  it.each(cases)('$name', async ({ set, error }) => {
    await expect(renderYaml({ set })).rejects.toThrow(error);
  });

  it('accepts the same keys with valid values (the cases above fail for the value, not the key)', async () => {
    const yaml = await renderYaml({
      set: [
        'replicaCount=3',
        'webhook.failurePolicy=Fail',
        'webhook.timeoutSeconds=10',
        'sidecar.resources.requests.cpu=20m',
        'config.logLevel=debug',
        'crds.enabled=false',
      ],
    });
    expect(yaml).toContain('replicas: 3');
    expect(yaml).not.toContain('kind: CustomResourceDefinition');
  });
});
