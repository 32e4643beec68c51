/**
 * The sidecar-injection webhook: it points at the controller Service and `/mutate`, trusts a CA
 * that really signed the serving certificate the controller mounts (or cert-manager injects it),
 * and is scoped the way injection webhooks must be (pods, CREATE, opt-in, system namespaces out).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_INJECT } from '../../controller/src/k8s/api/names';
import { ensureHelm } from './helm';
import { NAMESPACE, findObject, renderChart, type K8sObject } from './render';

interface Webhook {
  name: string;
  sideEffects: string;
  failurePolicy: string;
  timeoutSeconds: number;
  reinvocationPolicy: string;
  admissionReviewVersions: string[];
  clientConfig: {
    service: { name: string; namespace: string; path: string; port: number };
    caBundle?: string;
  };
  rules: { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: string[] }[];
  namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
  matchConditions?: { name: string; expression: string }[];
}

const webhookOf = (objs: readonly K8sObject[]): Webhook => {
  const cfg = findObject(objs, 'MutatingWebhookConfiguration');
  const hooks = cfg['webhooks'] as Webhook[];
  expect(hooks).toHaveLength(1);
  return hooks[0]!;
};
const b64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
const tlsSecretMountedByController = (objs: readonly K8sObject[]): string => {
  const deploy = findObject(objs, 'Deployment', '-controller');
  const volumes = (
    deploy['spec'] as { template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } } }
  ).template.spec.volumes;
  return volumes.find((v) => v.name === 'webhook-tls')!.secret!.secretName;
};

let base: K8sObject[];
beforeAll(async () => {
  ensureHelm();
  base = await renderChart();
});

describe('MutatingWebhookConfiguration', () => {
  it('calls /mutate on the controller Service port 443', () => {
    const hook = webhookOf(base);
    const svc = findObject(base, 'Service', '-controller');
    expect(hook.clientConfig.service).toEqual({
      name: svc.metadata.name,
      namespace: NAMESPACE,
      path: '/mutate',
      port: 443,
    });
    const ports = (svc['spec'] as { ports: { port: number; targetPort: string }[] }).ports;
    expect(ports).toContainEqual(expect.objectContaining({ port: 443, targetPort: 'webhook' }));
  });

  it('is side-effect free, fails open by default and only sees pod CREATEs', () => {
    const hook = webhookOf(base);
    expect(hook).toMatchObject({
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
      reinvocationPolicy: 'IfNeeded',
      admissionReviewVersions: ['v1'],
    });
    expect(hook.rules).toEqual([
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        operations: ['CREATE'],
        scope: 'Namespaced',
      },
    ]);
  });

  it('excludes the kube-* system namespaces and the release namespace', () => {
    expect(webhookOf(base).namespaceSelector.matchExpressions).toContainEqual({
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: ['kube-system', 'kube-public', 'kube-node-lease', NAMESPACE],
    });
  });

  it('with watchNamespaces, only calls the webhook for pods there', async () => {
    const objs = await renderChart({ set: ['watchNamespaces={ml}'] });
    expect(webhookOf(objs).namespaceSelector.matchExpressions).toContainEqual({
      key: 'kubernetes.io/metadata.name',
      operator: 'In',
      values: ['ml'],
    });
  });

  it('matches the opt-in annotation with CEL, and can turn that off', async () => {
    const conditions = webhookOf(base).matchConditions ?? [];
    expect(conditions).toHaveLength(1);
    // The same annotation the controller's webhook handler checks; every value but the opt-out
    // reaches it, so an unknown one ("yes") gets a warning instead of silence (ADR 0038).
    expect(conditions[0]!.expression).toContain(
      `object.metadata.annotations['${ANNOTATION_INJECT}'] != 'false'`,
    );
    const off = await renderChart({ set: ['webhook.matchConditions.enabled=false'] });
    expect(webhookOf(off).matchConditions).toBeUndefined();
  });

  it('takes failurePolicy, timeout and reinvocationPolicy from values', async () => {
    const objs = await renderChart({ valuesFiles: ['ci/cert-manager-values.yaml'] });
    expect(webhookOf(objs)).toMatchObject({
      failurePolicy: 'Fail',
      timeoutSeconds: 3,
      reinvocationPolicy: 'Never',
    });
  });
});

describe('Helm-generated TLS', () => {
  it('caBundle is the CA that signed the certificate the controller serves, valid for the Service name', () => {
    const hook = webhookOf(base);
    const secretName = tlsSecretMountedByController(base);
    const secret = findObject(base, 'Secret', secretName);
    expect(secret['type']).toBe('kubernetes.io/tls');
    const data = secret['data'] as Record<string, string>;
    expect(hook.clientConfig.caBundle).toBe(data['ca.crt']);

    const ca = new X509Certificate(b64(hook.clientConfig.caBundle!));
    const cert = new X509Certificate(b64(data['tls.crt']!));
    expect(ca.ca).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(b64(data['tls.key']!)))).toBe(true);
    const host = `${hook.clientConfig.service.name}.${NAMESPACE}.svc`;
    expect(cert.checkHost(host)).toBe(host);
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 24 * 3600 * 1000);
  });

  it('records the Service host on the Secret so a renamed Service gets a new certificate', () => {
    const secret = findObject(base, 'Secret', tlsSecretMountedByController(base));
    expect(secret.metadata.annotations?.['optimus.dev/webhook-service']).toBe(
      `optimus-controller.${NAMESPACE}.svc`,
    );
  });
});

describe('cert-manager TLS', () => {
  it('lets cert-manager inject the CA of the Certificate whose Secret the controller mounts', async () => {
    const objs = await renderChart({ valuesFiles: ['ci/cert-manager-values.yaml'] });
    const cfg = findObject(objs, 'MutatingWebhookConfiguration');
    const hook = webhookOf(objs);
    expect(hook.clientConfig.caBundle).toBeUndefined();
    const secretName = tlsSecretMountedByController(objs);
    const cert = objs.find(
      (o) => o.kind === 'Certificate' && (o['spec'] as { secretName: string }).secretName === secretName,
    )!;
    expect(cfg.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
      `${NAMESPACE}/${cert.metadata.name}`,
    );
    expect((cert['spec'] as { dnsNames: string[] }).dnsNames).toContain(
      `${hook.clientConfig.service.name}.${NAMESPACE}.svc`,
    );
    // No Helm-generated Secret competes with cert-manager's.
    expect(objs.filter((o) => o.kind === 'Secret' && o.metadata.name === secretName)).toEqual([]);
    // The serving certificate is signed by a CA Issuer rooted in a self-signed CA Certificate.
    const issuerName = (cert['spec'] as { issuerRef: { name: string } }).issuerRef.name;
    const issuer = findObject(objs, 'Issuer', issuerName);
    const caSecret = (issuer['spec'] as { ca: { secretName: string } }).ca.secretName;
    const caCert = objs.find(
      (o) => o.kind === 'Certificate' && (o['spec'] as { secretName: string }).secretName === caSecret,
    )!;
    expect((caCert['spec'] as { isCA: boolean }).isCA).toBe(true);
  });

  it('uses a given issuer instead of bootstrapping one', async () => {
    const objs = await renderChart({
      set: [
        'webhook.certManager.enabled=true',
        'webhook.certManager.issuerRef.name=corp-ca',
        'webhook.certManager.issuerRef.kind=ClusterIssuer',
      ],
    });
    expect(objs.filter((o) => o.kind === 'Issuer')).toEqual([]);
    const cert = findObject(objs, 'Certificate');
    expect((cert['spec'] as { issuerRef: unknown }).issuerRef).toEqual({
      name: 'corp-ca',
      kind: 'ClusterIssuer',
    });
  });
});
