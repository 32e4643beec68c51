import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INJECT, LABEL_INDEX, LABEL_JOB, LABEL_ROLE } from '../api/names';
import { mutate } from './mutate';

const pod: V1Pod = {
  metadata: {
    name: 'resnet-worker-1',
    labels: { [LABEL_JOB]: 'resnet', [LABEL_ROLE]: 'worker', [LABEL_INDEX]: '1' },
    annotations: { [ANNOTATION_INJECT]: 'true' },
    ownerReferences: [{ apiVersion: 'optimus.dev/v1alpha2', kind: 'OptimusJob', name: 'resnet', uid: 'u' }],
  },
  spec: { containers: [{ name: 'train', image: 'mxnet' }] },
};

describe('per-job broker credentials (ADR 0013)', () => {
  it("mounts the job's own Secret and lets the sidecar log in as its task", () => {
    const out = mutate(pod, 'ml', {
      image: 'sidecar',
      resources: {},
      brokerUrl: 'mqtt://broker:1883',
      credentialsSecret: 'shared-and-ignored',
      perJobCredentials: true,
      native: false,
    });
    if (out.kind !== 'injected') throw new Error(out.kind);
    const volume = out.pod.spec?.volumes?.find((v) => v.secret);
    expect(volume?.secret).toEqual({
      secretName: 'resnet-optimus-broker',
      items: [{ key: 'password', path: 'password' }],
    });
    const sidecar = out.pod.spec?.containers.find((c) => c.name !== 'train');
    const env = new Map((sidecar?.env ?? []).map((e) => [e.name, e]));
    expect(env.has('OPTIMUS_BROKER_USERNAME')).toBe(false); // the sidecar uses optimus.ml.resnet.worker.1
    expect(env.get('OPTIMUS_BROKER_PASSWORD_FILE')?.value).toMatch(/\/password$/);
    expect(env.has('OPTIMUS_BROKER_PASSWORD_OPTIONAL')).toBe(false);
  });

  it.each([
    ['an annotation-only pod (no owner)', undefined],
    ['a batch Job pod', [{ apiVersion: 'batch/v1', kind: 'Job', name: 'resnet', uid: 'u' }]],
    ['a Kubeflow pod', [{ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', name: 'resnet', uid: 'u' }]],
  ])('never lets %s wait on a Secret only OptimusJobs get (ADR 0038)', (_what, ownerReferences) => {
    const { ownerReferences: _optimusJob, ...meta } = pod.metadata ?? {};
    const p: V1Pod = { ...pod, metadata: ownerReferences ? { ...meta, ownerReferences } : meta };
    const out = mutate(p, 'ml', {
      image: 's',
      resources: {},
      brokerUrl: 'mqtt://b:1883',
      perJobCredentials: true,
      native: true,
    });
    if (out.kind !== 'injected') throw new Error(out.kind);
    expect(out.pod.spec?.volumes?.find((v) => v.secret)?.secret).toMatchObject({
      secretName: 'resnet-optimus-broker',
      optional: true,
    });
    const env = new Map((out.pod.spec?.initContainers?.[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env.get('OPTIMUS_BROKER_PASSWORD_OPTIONAL')).toBe('true');
  });
});
