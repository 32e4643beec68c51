/**
 * Pods that only say `optimus.dev/inject: "true"` (ADR 0038), as their owners create them at
 * admission: a batch Job's (Indexed or not), a Deployment's ReplicaSet's, the Kubeflow Training
 * Operator's, a hand-made one. Each gets its own task identity, or a warning saying why not.
 */
import type { V1Container, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { Pod } from 'kubernetes-models/v1/Pod';
import { describe, expect, it } from 'vitest';
import { podOrdinal } from '../../../../shared/src/pod-ordinal';
import { reviewAdmission } from './admission';
import { DEFAULT_SIDECAR_RESOURCES } from './sidecar-config';

const cfg = {
  image: 'sidecar:1',
  resources: DEFAULT_SIDECAR_RESOURCES,
  brokerUrl: 'mqtt://b:1883',
  native: true,
};
const TRAIN: V1Container = { name: 'train', image: 'pytorch', command: ['python', 'train.py'] };

export const podOf = (meta: V1ObjectMeta, containers: V1Container[] = [TRAIN]): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { ...meta, annotations: { 'optimus.dev/inject': 'true', ...meta.annotations } },
  spec: { containers },
});

export function review(pod: V1Pod) {
  const r = reviewAdmission(
    {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u', kind: { kind: 'Pod' }, namespace: 'ml', object: pod },
    },
    cfg,
  );
  if (!r.ok) throw new Error(r.error);
  const patch = JSON.parse(
    Buffer.from(r.review.response.patch ?? 'W10=', 'base64').toString(),
  ) as Operation[];
  const out = fastJsonPatch.applyPatch(structuredClone(pod), patch, true, false).newDocument;
  return { outcome: r.outcome, warnings: r.review.response.warnings ?? [], pod: out };
}

export const sidecarEnv = (p: V1Pod): Record<string, unknown> =>
  Object.fromEntries(
    (p.spec?.initContainers?.find((c) => c.name === 'optimus-sidecar')?.env ?? []).map((e) => [
      e.name,
      e.value ?? e.valueFrom,
    ]),
  );

const rs = (name: string) => [
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: 'x', controller: true },
];
const job = (name: string) => [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: 'x', controller: true }];
const FROM_NAME = { fieldRef: { fieldPath: 'metadata.name' } };

describe('annotation-only pods get a job identity', () => {
  it.each([
    {
      what: 'a batch Job pod (generateName, job-name labels)',
      meta: {
        generateName: 'mnist-',
        labels: { 'batch.kubernetes.io/job-name': 'mnist', 'job-name': 'mnist', 'controller-uid': 'x' },
        ownerReferences: job('mnist'),
      },
      env: { OPTIMUS_JOB: 'mnist', OPTIMUS_ROLE: 'worker', OPTIMUS_POD_NAME: FROM_NAME },
    },
    {
      what: 'an older batch Job pod (only the legacy job-name label)',
      meta: { generateName: 'old-', labels: { 'job-name': 'old' } },
      env: { OPTIMUS_JOB: 'old', OPTIMUS_POD_NAME: FROM_NAME },
    },
    {
      what: 'an Indexed Job pod (its completion index)',
      meta: {
        generateName: 'ix-2-',
        labels: { 'batch.kubernetes.io/job-name': 'ix', 'batch.kubernetes.io/job-completion-index': '2' },
        annotations: { 'batch.kubernetes.io/job-completion-index': '2' },
        ownerReferences: job('ix'),
      },
      env: { OPTIMUS_JOB: 'ix', OPTIMUS_INDEX: '2' },
    },
    {
      what: "a Deployment pod (its ReplicaSet's Deployment, index from its name once it has one)",
      meta: {
        generateName: 'bert-7d9f8c6b5-',
        labels: { app: 'bert', 'pod-template-hash': '7d9f8c6b5' },
        ownerReferences: rs('bert-7d9f8c6b5'),
      },
      env: { OPTIMUS_JOB: 'bert', OPTIMUS_POD_NAME: FROM_NAME },
    },
    {
      what: 'a PyTorchJob worker (Kubeflow labels)',
      meta: {
        name: 'ddp-worker-3',
        labels: {
          'training.kubeflow.org/job-name': 'ddp',
          'training.kubeflow.org/replica-type': 'worker',
          'training.kubeflow.org/replica-index': '3',
        },
      },
      env: { OPTIMUS_JOB: 'ddp', OPTIMUS_ROLE: 'worker', OPTIMUS_INDEX: '3' },
    },
    {
      what: 'a TFJob ps without a replica-index label (its name ordinal)',
      meta: {
        name: 'tf-ps-1',
        labels: { 'training.kubeflow.org/job-name': 'tf', 'training.kubeflow.org/replica-type': 'PS' },
      },
      env: { OPTIMUS_JOB: 'tf', OPTIMUS_ROLE: 'ps', OPTIMUS_INDEX: '1' },
    },
    {
      what: 'a plain pod (its name without the ordinal)',
      meta: { name: 'resnet-1' },
      env: { OPTIMUS_JOB: 'resnet', OPTIMUS_INDEX: '1' },
    },
    {
      what: 'a single plain pod (its name, index 0)',
      meta: { name: 'resnet' },
      env: { OPTIMUS_JOB: 'resnet', OPTIMUS_INDEX: '0' },
    },
    {
      what: 'a plain pod from generateName (its stem)',
      meta: { generateName: 'sweep-' },
      env: { OPTIMUS_JOB: 'sweep', OPTIMUS_POD_NAME: FROM_NAME },
    },
    {
      what: 'a StatefulSet pod (its owner, its ordinal)',
      meta: {
        name: 'ps-2',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'ps', uid: 'x', controller: true },
        ],
      },
      env: { OPTIMUS_JOB: 'ps', OPTIMUS_INDEX: '2' },
    },
    {
      what: 'the optimus.dev/job annotation over the owner',
      meta: {
        generateName: 'mnist-',
        labels: { 'job-name': 'mnist' },
        annotations: { 'optimus.dev/job': 'named' },
      },
      env: { OPTIMUS_JOB: 'named', OPTIMUS_POD_NAME: FROM_NAME },
    },
  ])('$what', ({ meta, env }) => {
    const r = review(podOf(meta));
    expect(r.outcome).toBe('injected');
    expect(() => new Pod(r.pod as never).validate()).not.toThrow();
    expect(sidecarEnv(r.pod)).toMatchObject(env);
    if ('OPTIMUS_POD_NAME' in env) expect(sidecarEnv(r.pod)['OPTIMUS_INDEX']).toBeUndefined();
  });

  it('is never skipped silently: a pod it cannot name is admitted unchanged with a warning', () => {
    const r = review(podOf({ generateName: 'Big_Name-' }));
    expect(r.outcome).toBe('unidentified');
    expect(r.warnings[0]).toMatch(/RFC 1123/);
    expect(review(podOf({})).warnings[0]).toMatch(/set the annotation optimus\.dev\/job/);
  });
});

describe('each replica its own identity', () => {
  it('gives named replicas distinct, stable indices', () => {
    const indexOf = (name: string) =>
      sidecarEnv(review(podOf({ name, ownerReferences: rs('bert-7d9f8c6b5') })).pod)['OPTIMUS_INDEX'];
    const names = ['bert-7d9f8c6b5-x2k4q', 'bert-7d9f8c6b5-q9zzm', 'bert-7d9f8c6b5-abcde'];
    const indices = names.map(indexOf);
    expect(new Set(indices).size).toBe(3);
    expect(names.map(indexOf)).toEqual(indices);
    expect(indices[0]).toBe(String(podOrdinal(names[0]!)));
  });

  it('takes the completion index from the label when the annotation is missing', () => {
    const meta = {
      generateName: 'ix-',
      labels: { 'job-name': 'ix', 'batch.kubernetes.io/job-completion-index': '4' },
    };
    expect(sidecarEnv(review(podOf(meta)).pod)).toMatchObject({ OPTIMUS_INDEX: '4' });
  });
});

describe('the training container is chosen deliberately', () => {
  const c = (name: string): V1Container => ({ name, image: name, command: [name] });
  const teed = (p: V1Pod) => p.spec!.containers.find((x) => x.command?.[0] === '/bin/sh')?.name;
  it.each([
    { what: 'istio-proxy injected first', containers: ['istio-proxy', 'train'], want: 'train' },
    {
      what: 'linkerd and fluent-bit around it',
      containers: ['linkerd-proxy', 'fluent-bit', 'app'],
      want: 'app',
    },
    {
      what: 'vault-agent and cloud-sql-proxy',
      containers: ['vault-agent', 'cloud-sql-proxy', 'trainer'],
      want: 'trainer',
    },
    { what: 'envoy', containers: ['envoy', 'worker'], want: 'worker' },
    { what: 'a Kubeflow container after a user one', containers: ['helper', 'pytorch'], want: 'pytorch' },
    {
      what: 'the annotation, even naming a sidecar-like name',
      containers: ['istio-proxy', 'x'],
      ann: 'istio-proxy',
      want: 'istio-proxy',
    },
  ])('$what → $want', ({ containers, ann, want }) => {
    const pod = podOf(
      { name: 'j', annotations: ann ? { 'optimus.dev/container': ann } : {} },
      containers.map(c),
    );
    const r = review(pod);
    expect(r.outcome).toBe('injected');
    expect(teed(r.pod)).toBe(want);
  });

  it('refuses, with a warning, a pod whose every container is a known sidecar or whose annotation names none', () => {
    const all = review(podOf({ name: 'j' }, [c('istio-proxy'), c('fluentd')]));
    expect(all.outcome).toBe('malformed');
    expect(all.warnings[0]).toMatch(/known sidecar.*optimus\.dev\/container/);
    const none = review(podOf({ name: 'j', annotations: { 'optimus.dev/container': 'nope' } }));
    expect(none.warnings[0]).toMatch(/no container is named "nope"/);
  });
});

describe('a log path over the image is refused, never mounted over', () => {
  const withLog = (path: string, container: Partial<V1Container> = {}) =>
    review(podOf({ name: 'j', annotations: { 'optimus.dev/log-path': path } }, [{ ...TRAIN, ...container }]));
  it.each([
    ['/app/train.log', {}],
    ['/workspace/train.log', {}],
    ['/opt/out.log', {}],
    ['/srv/train.log', {}],
    ['/home/train.log', {}],
    ['/code/train.log', { workingDir: '/code' }],
    ['/project/train.log', { workingDir: '/project' }],
    ['/project/train.log', { workingDir: '/project/src/' }],
  ])('refuses %s (%o) with a warning naming the fix, admitting the pod uninjected', (path, container) => {
    const r = withLog(path, container);
    expect(r.outcome).toBe('malformed');
    expect(r.pod.spec?.volumes).toBeUndefined();
    expect(r.pod.spec?.initContainers).toBeUndefined();
    expect(r.warnings[0]).toMatch(
      /would mount an emptyDir over .*hiding the image's files.*e\.g\. \/var\/log\/optimus\/train\.log/,
    );
  });

  it.each<[string, Partial<V1Container>]>([
    ['/app/logs/train.log', {}],
    ['/var/log/optimus/train.log', { workingDir: '/app' }],
    ['/tmp/train.log', { workingDir: '/workspace' }],
    ['/app/train.log', { volumeMounts: [{ name: 'logs', mountPath: '/app' }] }],
  ])(
    'accepts %s (%o): a directory of its own, or the volume the container mounts there',
    (path, container) => {
      const pod = podOf({ name: 'j', annotations: { 'optimus.dev/log-path': path } }, [
        { ...TRAIN, ...container },
      ]);
      if (container.volumeMounts) pod.spec!.volumes = [{ name: 'logs', emptyDir: {} }];
      expect(review(pod).outcome).toBe('injected');
    },
  );
});

describe('an unknown annotation value gets a warning naming the accepted values', () => {
  it.each(['yes', 'True', '1', 'on', ''])('inject: "%s" → not injected, warned', (value) => {
    const r = review(podOf({ name: 'j', annotations: { 'optimus.dev/inject': value } }));
    expect(r.outcome).toBe('malformed');
    expect(r.pod.spec?.initContainers).toBeUndefined();
    expect(r.warnings[0]).toMatch(
      new RegExp(`optimus\\.dev/inject "${value}" is not one of "true", "false"`),
    );
  });

  it('inject: "false" stays a silent opt-out', () => {
    const r = review(podOf({ name: 'j', annotations: { 'optimus.dev/inject': 'false' } }));
    expect(r).toMatchObject({ outcome: 'not-requested', warnings: [] });
  });

  it('capture-output: "no" is warned about and the output still captured', () => {
    const r = review(podOf({ name: 'j', annotations: { 'optimus.dev/capture-output': 'no' } }));
    expect(r.outcome).toBe('injected');
    expect(r.warnings).toEqual([expect.stringMatching(/capture-output "no" is not one of "true", "false"/)]);
    expect(r.pod.spec!.containers[0]!.command?.[0]).toBe('/bin/sh');
  });
});
