import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { Pod } from 'kubernetes-models/v1/Pod';
import { describe, expect, it } from 'vitest';
import type { AdmissionReviewOut } from './admission';
import { reviewAdmission } from './admission';
import type { SidecarConfig } from './sidecar-config';
import { DEFAULT_SIDECAR_RESOURCES, supportsNativeSidecars } from './sidecar-config';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`fixtures/${name}.json`, import.meta.url), 'utf8')) as {
    request: { uid: string; object: V1Pod };
  };

const config = (native: boolean, credentialsSecret?: string): SidecarConfig => ({
  image: 'ghcr.io/optimus/sidecar:0.1.0',
  resources: DEFAULT_SIDECAR_RESOURCES,
  brokerUrl: 'mqtt://optimus-broker.optimus-system:1883',
  native,
  ...(credentialsSecret ? { credentialsSecret } : {}),
});

function review(body: unknown, cfg: SidecarConfig): AdmissionReviewOut {
  const r = reviewAdmission(body, cfg);
  if (!r.ok) throw new Error(r.error);
  return r.review;
}

const patched = (pod: V1Pod, out: AdmissionReviewOut): V1Pod => {
  const ops = JSON.parse(Buffer.from(out.response.patch ?? 'W10=', 'base64').toString()) as Operation[];
  return fastJsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
};

const envOf = (pod: V1Pod) => {
  const c = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find(
    (x) => x.name === 'optimus-sidecar',
  );
  return Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
};

describe('sidecar-injection webhook on AdmissionReview fixtures', () => {
  it.each([
    { name: 'native sidecar (≥ 1.29)', native: true },
    { name: 'classic sidecar (< 1.29)', native: false },
  ])('opt-in pod gets the $name, a valid pod, and the sidecar env', ({ native }) => {
    const f = fixture('opt-in');
    const out = review(f, config(native, 'optimus-broker-credentials'));
    expect(out.response).toMatchObject({ uid: f.request.uid, allowed: true, patchType: 'JSONPatch' });
    const pod = patched(f.request.object, out);
    expect(() => new Pod(pod as never).validate()).not.toThrow();
    const init = pod.spec?.initContainers ?? [];
    expect(init.map((c) => [c.name, c.restartPolicy])).toEqual(native ? [['optimus-sidecar', 'Always']] : []);
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(native ? ['main'] : ['main', 'optimus-sidecar']);
    const sidecar = [...init, ...(pod.spec?.containers ?? [])].find((c) => c.name === 'optimus-sidecar');
    expect(sidecar?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(envOf(pod)).toMatchObject({
      OPTIMUS_NAMESPACE: 'team-a',
      OPTIMUS_JOB: 'resnet',
      OPTIMUS_ROLE: 'worker',
      OPTIMUS_INDEX: '1',
      OPTIMUS_BROKER_URL: 'mqtt://optimus-broker.optimus-system:1883',
      OPTIMUS_BROKER_USERNAME: { secretKeyRef: { name: 'optimus-broker-credentials', key: 'username' } },
      OPTIMUS_BROKER_PASSWORD_FILE: '/etc/optimus/broker/password',
      OPTIMUS_LOG_PATH: '/var/log/optimus/train.log',
      OPTIMUS_BATCH_SIZE: '128',
      OPTIMUS_LOG_FORMAT: 'mxnet',
      OPTIMUS_STATE_DIR: '/var/log/optimus/.sidecar',
      OPTIMUS_DONE_FILE: '/var/log/optimus/.done',
    });
    // The training container shares the log volume; its other mounts are kept.
    expect(pod.spec?.containers[0]?.volumeMounts?.map((m) => m.name)).toEqual([
      'kube-api-access-x7k2p',
      'optimus-log',
    ]);
    expect(pod.spec?.volumes?.map((v) => v.name)).toEqual([
      'kube-api-access-x7k2p',
      'optimus-log',
      'optimus-broker-credentials',
    ]);
  });

  it('is idempotent: a second pass over the mutated pod changes nothing', () => {
    const f = fixture('opt-in');
    const once = patched(f.request.object, review(f, config(true)));
    const second = review({ ...f, request: { ...f.request, object: once } }, config(true));
    expect(second.response).toEqual({ uid: f.request.uid, allowed: true });
  });

  it.each([
    { name: 'opt-out pod', file: 'opt-out', warnings: undefined },
    { name: 'already injected pod', file: 'already-injected', warnings: undefined },
    {
      name: 'object that is not a pod',
      file: 'not-a-pod',
      warnings: ['optimus: the object is not a Pod with containers; nothing injected'],
    },
  ])('allows the $name unchanged, answering its uid', ({ file, warnings }) => {
    const f = fixture(file);
    const out = review(f, config(true));
    expect(out.response).toEqual({ uid: f.request.uid, allowed: true, ...(warnings ? { warnings } : {}) });
  });

  it.each([
    { name: 'garbage', body: 'garbage' },
    { name: 'null', body: null },
    { name: 'array', body: [1, 2] },
    { name: 'review without request', body: { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1' } },
    { name: 'request without uid', body: { kind: 'AdmissionReview', request: { object: {} } } },
  ])('answers a malformed body ($name) with an error, not an exception', ({ body }) => {
    const r = reviewAdmission(body, config(true));
    expect(r.ok).toBe(false);
  });

  it.each([
    { name: 'volumes not a list', spec: { volumes: { a: 1 } } },
    { name: 'volumes a string', spec: { volumes: 'oops' } },
    { name: 'volumeMounts not a list', container: { volumeMounts: 'x' } },
    { name: 'env not a list', container: { env: { A: '1' } } },
    { name: 'command not a list', container: { command: 'python train.py' } },
  ])(
    'answers an opt-in pod with malformed fields ($name) with its uid, allowed, no patch, a warning',
    (c) => {
      const f = fixture('opt-in');
      const pod = structuredClone(f.request.object) as unknown as {
        spec: Record<string, unknown> & { containers: Record<string, unknown>[] };
      };
      Object.assign(pod.spec, c.spec ?? {});
      Object.assign(pod.spec.containers[0]!, c.container ?? {});
      const out = review({ ...f, request: { ...f.request, object: pod } }, config(true));
      expect(out.response).toMatchObject({ uid: f.request.uid, allowed: true });
      expect(out.response.patch).toBeUndefined();
      expect(out.response.warnings?.[0]).toMatch(/malformed Pod/);
    },
  );

  it('admits an opt-in pod it cannot identify unchanged, with a warning that says what is missing', () => {
    const f = fixture('opt-in');
    const pod = structuredClone(f.request.object);
    delete pod.metadata!.labels!['optimus.dev/job'];
    // Nothing else to take a job name from either (ADR 0038: owner, generateName, name).
    delete pod.metadata!.name;
    delete pod.metadata!.ownerReferences;
    const r = reviewAdmission({ ...f, request: { ...f.request, object: pod } }, config(true));
    expect(r.ok && r.outcome).toBe('unidentified');
    const out = review({ ...f, request: { ...f.request, object: pod } }, config(true));
    expect(out.response.patch).toBeUndefined();
    expect(out.response.allowed).toBe(true);
    expect(out.response.warnings?.[0]).toMatch(/no job name: set the annotation optimus.dev\/job/);
  });

  it.each([
    ['v1.28.9', false],
    ['v1.29.0', true],
    ['v1.31.2-gke.1000', true],
    ['v2.0.0', true],
    ['garbage', false],
  ] as const)('native sidecars on %s: %s', (version, expected) => {
    expect(supportsNativeSidecars(version)).toBe(expected);
  });
});
