import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import type { OptimusJob, OptimusJobSpec } from './optimus-job';
import { buildHeadlessService, buildJobPods } from './pod-builder';

const spec: OptimusJobSpec = {
  mode: 'async',
  container: {
    image: 'mxnet/python:1.9.1',
    command: ['python', 'train.py'],
    args: ['--lr', '0.1'],
    env: [{ name: 'DATA', value: '/data' }],
  },
  ps: { resources: { requests: { cpu: '2', memory: '4Gi' } } },
  worker: {
    resources: {
      requests: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '1' },
      limits: { 'nvidia.com/gpu': '1' },
    },
  },
  batchSize: 64,
  convergence: { threshold: 0.02, patience: 2, stepsPerEpoch: 100 },
  scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 8 },
  checkpoint: { claimName: 'ckpt', mountPath: '/ckpt', gracePeriodSeconds: 90 },
  logFormat: 'mxnet',
};
const job: OptimusJob = { metadata: { name: 'bert', namespace: 'nlp', uid: 'uid-1' }, spec };
const pods = buildJobPods({
  job,
  spec,
  shape: { ps: 2, workers: 1 },
  placement: [
    { role: 'worker', index: 0, server: 'gpu-2' },
    { role: 'ps', index: 1, server: 'cpu-1' },
    { role: 'ps', index: 0, server: 'cpu-0' },
  ],
});
const env = (name: string) =>
  Object.fromEntries(
    (pods.find((p) => p.metadata?.name === name)?.spec?.containers[0]?.env ?? []).map((e) => [
      e.name,
      e.value,
    ]),
  );

describe('pod builder', () => {
  it('builds one scheduler, p servers and w workers, each a valid Pod', () => {
    expect(pods.map((p) => p.metadata?.name)).toEqual([
      'bert-scheduler-0',
      'bert-ps-0',
      'bert-ps-1',
      'bert-worker-0',
    ]);
    for (const p of pods) expect(() => new Pod(p as never).validate()).not.toThrow();
  });

  it.each([
    { pod: 'bert-scheduler-0', role: 'scheduler' },
    { pod: 'bert-ps-1', role: 'server' },
    { pod: 'bert-worker-0', role: 'worker' },
  ])('$pod gets DMLC_ROLE=$role and the shared DMLC env', ({ pod, role }) => {
    expect(env(pod)).toMatchObject({
      DMLC_ROLE: role,
      DMLC_PS_ROOT_URI: 'scheduler-0.bert.nlp.svc',
      DMLC_PS_ROOT_PORT: '9091',
      DMLC_NUM_SERVER: '2',
      DMLC_NUM_WORKER: '1',
      DMLC_USE_KUBERNETES: '1',
      OPTIMUS_KVSTORE: 'dist_async',
      OPTIMUS_CHECKPOINT_DIR: '/ckpt',
      DATA: '/data',
    });
  });

  it('pins each pod, keeps the user command behind the tee wrapper, and asks for the sidecar', () => {
    const w = pods.find((p) => p.metadata?.name === 'bert-worker-0')!;
    expect(
      w.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]
        ?.matchFields?.[0]?.values,
    ).toEqual(['gpu-2']);
    expect(
      pods[0]?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms[0]?.matchFields?.[0]?.values,
    ).toEqual(['cpu-0']);
    expect(w.spec?.containers[0]?.command?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(w.spec?.containers[0]?.args).toEqual(['python', 'train.py', '--lr', '0.1']);
    expect(w.spec?.terminationGracePeriodSeconds).toBe(90);
    expect(w.metadata?.annotations).toEqual({
      'optimus.dev/inject': 'true',
      'optimus.dev/batch-size': '64',
      'optimus.dev/log-format': 'mxnet',
    });
    expect(w.spec?.containers[0]?.resources?.limits).toEqual({ 'nvidia.com/gpu': '1' });
  });

  it('keeps the membership variables it manages even when the user sets them', () => {
    const userSpec: OptimusJobSpec = {
      ...spec,
      container: {
        ...spec.container,
        env: [
          { name: 'DMLC_NUM_WORKER', value: '99' },
          { name: 'X', value: '1' },
        ],
      },
    };
    const built = buildJobPods({
      job,
      spec: userSpec,
      shape: { ps: 1, workers: 2 },
      placement: [
        { role: 'ps', index: 0, server: 'cpu-0' },
        { role: 'worker', index: 0, server: 'gpu-0' },
        { role: 'worker', index: 1, server: 'gpu-1' },
      ],
    });
    for (const pod of built) {
      const vars = pod.spec?.containers[0]?.env ?? [];
      expect(vars.filter((e) => e.name === 'DMLC_NUM_WORKER')).toEqual([
        { name: 'DMLC_NUM_WORKER', value: '2' },
      ]);
      expect(vars).toContainEqual({ name: 'X', value: '1' });
    }
  });

  it('builds a headless Service that publishes not-ready addresses', () => {
    const svc = buildHeadlessService(job);
    expect(svc.spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { 'optimus.dev/job': 'bert' },
    });
    expect(() => new Service(svc as never).validate()).not.toThrow();
  });
});
