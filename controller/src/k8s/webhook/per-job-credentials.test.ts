import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INJECT, LABEL_INDEX, LABEL_JOB, LABEL_ROLE } from '../api/names';
import { mutate } from './mutate';

const pod: V1Pod = {
  metadata: {
    name: 'resnet-worker-1',
    labels: { [LABEL_JOB]: 'resnet', [LABEL_ROLE]: 'worker', [LABEL_INDEX]: '1' },
    annotations: { [ANNOTATION_INJECT]: 'true' },
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
  });
});
