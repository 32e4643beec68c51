/**
 * Opt-in by annotation for pods the controller did not build: a hand-made pod, a Kubeflow
 * Training Operator pod, a pod with explicit annotations. The mutated pod must be a valid Pod
 * whose training container writes what the sidecar reads.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { Pod } from 'kubernetes-models/v1/Pod';
import { describe, expect, it } from 'vitest';
import { TEE_ARGV0 } from '../rollout/log-tee';
import { identify } from './identity';
import type { AdmissionReviewOut } from './admission';
import { reviewAdmission } from './admission';
import { DEFAULT_SIDECAR_RESOURCES } from './sidecar-config';

const cfg = {
  image: 'sidecar:1',
  resources: DEFAULT_SIDECAR_RESOURCES,
  brokerUrl: 'mqtt://b:1883',
  native: true,
};

const podWith = (o: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  containers?: V1Container[];
  volumes?: unknown;
}): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    labels: o.labels ?? {},
    annotations: { 'optimus.dev/inject': 'true', ...o.annotations },
  },
  spec: {
    containers: o.containers ?? [
      { name: 'train', image: 'mxnet', command: ['python', 'train.py'], args: ['--lr', '0.1'] },
    ],
    ...(o.volumes !== undefined ? { volumes: o.volumes as never } : {}),
  },
});

function reviewOf(pod: V1Pod, namespace = 'ml') {
  const r = reviewAdmission(
    {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u', kind: { kind: 'Pod' }, namespace, object: pod },
    },
    cfg,
  );
  if (!r.ok) throw new Error(r.error);
  return r;
}
const applied = (pod: V1Pod, out: AdmissionReviewOut): V1Pod =>
  fastJsonPatch.applyPatch(
    structuredClone(pod),
    JSON.parse(Buffer.from(out.response.patch ?? 'W10=', 'base64').toString()) as Operation[],
    true,
    false,
  ).newDocument;
const envOf = (c: V1Container | undefined) =>
  Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value]));
const sidecarOf = (p: V1Pod) => p.spec?.initContainers?.find((c) => c.name === 'optimus-sidecar');

describe('opt-in by annotation', () => {
  it.each([
    {
      name: "Optimus' labels",
      labels: { 'optimus.dev/job': 'resnet', 'optimus.dev/role': 'ps', 'optimus.dev/index': '2' },
      annotations: {},
      expected: { job: 'resnet', role: 'ps', index: 2, source: 'optimus-labels' },
    },
    {
      name: "Kubeflow's labels (MXJob server)",
      labels: {
        'training.kubeflow.org/job-name': 'mx',
        'training.kubeflow.org/replica-type': 'server',
        'training.kubeflow.org/replica-index': '1',
      },
      annotations: {},
      expected: { job: 'mx', role: 'ps', index: 1, source: 'kubeflow-labels' },
    },
    {
      name: "Kubeflow's labels (TFJob chief)",
      labels: { 'training.kubeflow.org/job-name': 'tf', 'training.kubeflow.org/replica-type': 'Chief' },
      annotations: {},
      expected: { job: 'tf', role: 'scheduler', index: 0, source: 'kubeflow-labels' },
    },
    {
      name: 'explicit annotations only',
      labels: {},
      annotations: { 'optimus.dev/job': 'hand', 'optimus.dev/index': '3' },
      expected: { job: 'hand', role: 'worker', index: 3, source: 'annotations' },
    },
    {
      name: 'our label beats a Kubeflow label beats an annotation',
      labels: { 'optimus.dev/job': 'ours', 'training.kubeflow.org/job-name': 'theirs' },
      annotations: { 'optimus.dev/job': 'annotated' },
      expected: { job: 'ours', role: 'worker', index: 0, source: 'optimus-labels' },
    },
  ])('identifies a pod by $name', ({ labels, annotations, expected }) => {
    expect(identify(labels, annotations)).toEqual({ ok: true, identity: expected });
  });

  it.each([
    { name: 'no job at all', labels: {}, reason: /no job name/ },
    {
      name: 'an evaluator',
      labels: { 'training.kubeflow.org/job-name': 'tf', 'training.kubeflow.org/replica-type': 'evaluator' },
      reason: /role "evaluator"/,
    },
    {
      name: 'a bad index',
      labels: { 'optimus.dev/job': 'j', 'optimus.dev/index': 'one' },
      reason: /index "one"/,
    },
    {
      name: 'a job name that is no topic segment',
      labels: { 'optimus.dev/job': 'Big_Job' },
      reason: /RFC 1123/,
    },
  ])('does not identify $name', ({ labels, reason }) => {
    const r = identify(labels, {});
    expect(r.ok ? '' : r.reason).toMatch(reason);
  });

  it('gives a hand-made pod a working sidecar: its output teed into the shared log, same command', () => {
    const pod = podWith({ annotations: { 'optimus.dev/job': 'hand' } });
    const r = reviewOf(pod);
    expect(r.outcome).toBe('injected');
    const out = applied(pod, r.review);
    expect(() => new Pod(out as never).validate()).not.toThrow();
    const train = out.spec!.containers[0]!;
    expect(train.command?.[3]).toBe(TEE_ARGV0);
    expect(train.args).toEqual(['python', 'train.py', '--lr', '0.1']);
    expect(envOf(train)).toMatchObject({
      OPTIMUS_LOG_PATH: '/var/log/optimus/train.log',
      OPTIMUS_DONE_FILE: '/var/log/optimus/.done',
    });
    expect(train.volumeMounts).toEqual([{ name: 'optimus-log', mountPath: '/var/log/optimus' }]);
    const sidecar = sidecarOf(out);
    expect(envOf(sidecar)).toMatchObject({
      OPTIMUS_JOB: 'hand',
      OPTIMUS_ROLE: 'worker',
      OPTIMUS_INDEX: '0',
      OPTIMUS_LOG_PATH: '/var/log/optimus/train.log',
    });
    expect(sidecar?.volumeMounts).toEqual([{ name: 'optimus-log', mountPath: '/var/log/optimus' }]);
  });

  it('follows the log-path annotation and shares the volume the user already mounts there', () => {
    const pod = podWith({
      annotations: {
        'optimus.dev/job': 'hand',
        'optimus.dev/log-path': '/workspace/logs/out.log',
        'optimus.dev/capture-output': 'false',
      },
      containers: [
        {
          name: 'train',
          image: 'i',
          command: ['python', 'train.py'],
          volumeMounts: [{ name: 'scratch', mountPath: '/workspace/logs' }],
        },
      ],
      volumes: [{ name: 'scratch', emptyDir: {} }],
    });
    const out = applied(pod, reviewOf(pod).review);
    expect(out.spec!.containers[0]!.command).toEqual(['python', 'train.py']); // the program writes it
    expect(out.spec!.volumes!.map((v) => v.name)).toEqual(['scratch']);
    expect(sidecarOf(out)?.volumeMounts).toEqual([{ name: 'scratch', mountPath: '/workspace/logs' }]);
    expect(envOf(sidecarOf(out))['OPTIMUS_LOG_PATH']).toBe('/workspace/logs/out.log');
  });

  it('picks the training container by annotation, Kubeflow name or first, and leaves the others alone', () => {
    const proxy = { name: 'proxy', image: 'envoy', command: ['envoy'] };
    const pod = podWith({
      labels: { 'training.kubeflow.org/job-name': 'tf', 'training.kubeflow.org/replica-type': 'worker' },
      containers: [proxy, { name: 'tensorflow', image: 'tf', command: ['python', 'w.py'] }],
    });
    const out = applied(pod, reviewOf(pod).review);
    expect(out.spec!.containers[0]).toEqual(proxy);
    expect(out.spec!.containers[1]!.command?.[3]).toBe(TEE_ARGV0);
  });

  it('still injects into a container without a command, and warns that its output cannot be copied', () => {
    const pod = podWith({
      annotations: { 'optimus.dev/job': 'hand' },
      containers: [{ name: 'train', image: 'i' }],
    });
    const r = reviewOf(pod);
    expect(r.outcome).toBe('injected');
    expect(r.review.response.warnings?.[0]).toMatch(/has no command/);
  });

  it.each(['kube-system', 'kube-public', 'kube-node-lease'])(
    'never injects into %s, even when asked',
    (ns) => {
      const r = reviewOf(podWith({ labels: { 'optimus.dev/job': 'j' } }), ns);
      expect(r.outcome).toBe('excluded');
      expect(r.review.response.patch).toBeUndefined();
      expect(r.review.response.warnings?.[0]).toContain(ns);
    },
  );

  it('refuses a log path in a system directory or at the root, with a warning', () => {
    for (const path of ['/etc/x.log', '/train.log', 'relative.log']) {
      const r = reviewOf(podWith({ annotations: { 'optimus.dev/job': 'j', 'optimus.dev/log-path': path } }));
      expect(r.outcome).toBe('malformed');
      expect(r.review.response.patch).toBeUndefined();
    }
  });

  it('ignores a batch size or log format the sidecar would refuse, with a warning, instead of a crash-looping sidecar', () => {
    const pod = podWith({
      annotations: {
        'optimus.dev/job': 'j',
        'optimus.dev/batch-size': '85.3',
        'optimus.dev/log-format': 'pytorch',
      },
    });
    const r = reviewOf(pod);
    const env = envOf(sidecarOf(applied(pod, r.review)));
    expect(env['OPTIMUS_BATCH_SIZE']).toBeUndefined();
    expect(env['OPTIMUS_LOG_FORMAT']).toBeUndefined();
    expect(r.review.response.warnings).toHaveLength(2);
  });
});
