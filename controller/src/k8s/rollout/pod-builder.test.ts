import type { V1Pod } from '@kubernetes/client-node';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { TEE_ARGV0 } from './log-tee';
import type { OptimusJob, OptimusJobSpec } from '../api/optimus-job';
import { demandOf, parseSpec } from '../api/optimus-job';
import { buildHeadlessService, buildJobPods, pinTo } from './pod-builder';

/** A template as a platform team writes it for tainted GPU nodes, with data and shared memory. */
const workerTemplate = {
  metadata: { labels: { team: 'vision' }, annotations: { 'example.com/owner': 'ml-platform' } },
  spec: {
    serviceAccountName: 'trainer',
    imagePullSecrets: [{ name: 'registry' }],
    nodeSelector: { 'node.kubernetes.io/instance-type': 'p3.2xlarge' },
    tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    securityContext: { runAsUser: 1000, fsGroup: 1000 },
    priorityClassName: 'training',
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
            { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
          ],
        },
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 1, preference: { matchExpressions: [{ key: 'ssd', operator: 'Exists' }] } },
        ],
      },
    },
    initContainers: [
      {
        name: 'fetch',
        image: 'busybox',
        command: ['sh', '-c', 'cp -r /src /data'],
        resources: { requests: { cpu: '2', memory: '1Gi' } },
      },
    ],
    containers: [
      {
        name: 'mxnet',
        image: 'mxnet/python:1.9.1_gpu_cu112_py3',
        command: ['python3', 'train.py'],
        args: ['--lr', '0.1', '--batch-size', '$(OPTIMUS_BATCH_SIZE)'],
        env: [
          { name: 'DATA', value: '/data' },
          { name: 'DMLC_NUM_WORKER', value: '99' },
          { name: 'WANDB_API_KEY', valueFrom: { secretKeyRef: { name: 'wandb', key: 'key' } } },
        ],
        resources: {
          requests: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '1' },
          limits: { 'nvidia.com/gpu': '1' },
        },
        volumeMounts: [
          { name: 'data', mountPath: '/data', readOnly: true },
          { name: 'shm', mountPath: '/dev/shm' },
        ],
      },
      { name: 'metrics-exporter', image: 'exporter:1', resources: { requests: { cpu: '100m' } } },
    ],
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'imagenet' } },
      { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } },
    ],
  },
};

const raw = {
  mode: 'sync',
  replicaSpecs: {
    PS: {
      template: {
        spec: {
          containers: [
            {
              name: 'mxnet',
              image: 'mxnet/python:1.9.1',
              command: ['python3', 'train.py'],
              resources: { requests: { cpu: '2', memory: '4Gi' } },
            },
          ],
        },
      },
    },
    Worker: { template: workerTemplate },
  },
  batchSize: 256,
  convergence: { threshold: 0.02, patience: 2, stepsPerEpoch: 100 },
  scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 8 },
  checkpoint: { claimName: 'ckpt', mountPath: '/ckpt', gracePeriodSeconds: 90 },
  logFormat: 'mxnet',
};
const parsed = parseSpec(raw);
if (!parsed.ok) throw new Error(parsed.error);
const spec: OptimusJobSpec = parsed.spec;
const job: OptimusJob = { metadata: { name: 'bert', namespace: 'nlp', uid: 'uid-1' }, spec };
const pods = buildJobPods({
  job,
  spec,
  shape: { ps: 2, workers: 3 },
  placement: [
    { role: 'worker', index: 0, server: 'gpu-2' },
    { role: 'worker', index: 1, server: 'gpu-3' },
    { role: 'worker', index: 2, server: 'gpu-4' },
    { role: 'ps', index: 1, server: 'cpu-1' },
    { role: 'ps', index: 0, server: 'cpu-0' },
  ],
});
const pod = (name: string): V1Pod => {
  const p = pods.find((x) => x.metadata?.name === name);
  if (!p) throw new Error(`no pod ${name}`);
  return p;
};
const main = (name: string) => pod(name).spec!.containers.find((c) => c.name === 'mxnet')!;
const env = (name: string) => Object.fromEntries((main(name).env ?? []).map((e) => [e.name, e.value]));
const worker = pod('bert-worker-0');

describe('pod builder', () => {
  it('builds one scheduler, p servers and w workers, each a valid Pod', () => {
    expect(pods.map((p) => p.metadata?.name)).toEqual([
      'bert-scheduler-0',
      'bert-ps-0',
      'bert-ps-1',
      'bert-worker-0',
      'bert-worker-1',
      'bert-worker-2',
    ]);
    for (const p of pods) expect(() => new Pod(p as never).validate()).not.toThrow();
  });

  it.each([
    { pod: 'bert-scheduler-0', role: 'scheduler', optimusRole: 'scheduler', index: '0' },
    { pod: 'bert-ps-1', role: 'server', optimusRole: 'ps', index: '1' },
    { pod: 'bert-worker-2', role: 'worker', optimusRole: 'worker', index: '2' },
  ])(
    '$pod gets DMLC_ROLE=$role and the shared DMLC/OPTIMUS env',
    ({ pod: name, role, optimusRole, index }) => {
      expect(env(name)).toMatchObject({
        DMLC_ROLE: role,
        DMLC_PS_ROOT_URI: 'scheduler-0.bert.nlp.svc',
        DMLC_PS_ROOT_PORT: '9091',
        DMLC_NUM_SERVER: '2',
        DMLC_NUM_WORKER: '3',
        DMLC_USE_KUBERNETES: '1',
        OPTIMUS_JOB: 'bert',
        OPTIMUS_NAMESPACE: 'nlp',
        OPTIMUS_ROLE: optimusRole,
        OPTIMUS_INDEX: index,
        OPTIMUS_NUM_PS: '2',
        OPTIMUS_NUM_WORKERS: '3',
        OPTIMUS_KVSTORE: 'dist_sync',
        OPTIMUS_CHECKPOINT_DIR: '/ckpt',
        // sync: the global batch 256 over 3 workers
        OPTIMUS_BATCH_SIZE: '85',
        OPTIMUS_GLOBAL_BATCH_SIZE: '255',
        OPTIMUS_LOG_PATH: '/var/log/optimus/train.log',
      });
    },
  );

  it('passes through every field it does not own, exactly as written', () => {
    const s = worker.spec!;
    expect(s.serviceAccountName).toBe('trainer');
    expect(s.imagePullSecrets).toEqual([{ name: 'registry' }]);
    expect(s.nodeSelector).toEqual(workerTemplate.spec.nodeSelector);
    expect(s.tolerations).toEqual(workerTemplate.spec.tolerations);
    expect(s.securityContext).toEqual(workerTemplate.spec.securityContext);
    expect(s.priorityClassName).toBe('training');
    expect(s.initContainers).toEqual(workerTemplate.spec.initContainers);
    expect(s.containers[1]).toEqual(workerTemplate.spec.containers[1]);
    expect(s.volumes).toEqual([
      ...workerTemplate.spec.volumes,
      { name: 'optimus-checkpoint', persistentVolumeClaim: { claimName: 'ckpt' } },
    ]);
    expect(main('bert-worker-0').volumeMounts).toEqual([
      ...(workerTemplate.spec.containers[0]!.volumeMounts ?? []),
      { name: 'optimus-checkpoint', mountPath: '/ckpt' },
    ]);
    expect(main('bert-worker-0').resources).toEqual(workerTemplate.spec.containers[0]!.resources);
    expect(main('bert-worker-0').env).toContainEqual({
      name: 'WANDB_API_KEY',
      valueFrom: { secretKeyRef: { name: 'wandb', key: 'key' } },
    });
    expect(worker.metadata?.labels).toMatchObject({ team: 'vision', 'optimus.dev/job': 'bert' });
    expect(worker.metadata?.annotations).toEqual({
      'example.com/owner': 'ml-platform',
      'optimus.dev/inject': 'true',
      'optimus.dev/container': 'mxnet',
      'optimus.dev/batch-size': '85',
      'optimus.dev/log-format': 'mxnet',
    });
  });

  it('owns its membership variables: a user value is dropped, not duplicated', () => {
    for (const p of pods) {
      const vars = p.spec!.containers.find((c) => c.name === 'mxnet')!.env ?? [];
      expect(vars.filter((e) => e.name === 'DMLC_NUM_WORKER')).toEqual([
        { name: 'DMLC_NUM_WORKER', value: '3' },
      ]);
    }
    expect(env('bert-worker-0')['DATA']).toBe('/data');
  });

  it('pins each pod by ANDing its node into every required term of the template', () => {
    const terms =
      worker.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    const pin = { key: 'metadata.name', operator: 'In', values: ['gpu-2'] };
    expect(terms).toEqual([
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }], matchFields: [pin] },
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }], matchFields: [pin] },
    ]);
    expect(worker.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).toEqual(
      workerTemplate.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution,
    );
    // The scheduler sits on ps 0's node; a template without affinity gets the pin alone.
    expect(pod('bert-scheduler-0').spec?.affinity).toEqual(pinTo('cpu-0'));
    expect(pinTo('n1', { podAntiAffinity: {} })).toMatchObject({ podAntiAffinity: {} });
  });

  it('keeps the user command behind the log tee, and owns the pod identity fields', () => {
    const c = main('bert-worker-0');
    expect(c.command?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(c.command?.[3]).toBe(TEE_ARGV0);
    expect(c.args).toEqual(['python3', 'train.py', '--lr', '0.1', '--batch-size', '$(OPTIMUS_BATCH_SIZE)']);
    expect(worker.spec).toMatchObject({
      restartPolicy: 'Never',
      hostname: 'worker-0',
      subdomain: 'bert',
      terminationGracePeriodSeconds: 90,
      automountServiceAccountToken: false,
    });
    expect(pod('bert-scheduler-0').spec?.containers[0]?.ports).toEqual([
      { name: 'ps-root', containerPort: 9091 },
    ]);
  });

  it('mounts a service-account token only when the template asks for one', () => {
    const asks = parseSpec({
      ...raw,
      replicaSpecs: {
        ...raw.replicaSpecs,
        Worker: {
          template: {
            ...workerTemplate,
            spec: { ...workerTemplate.spec, automountServiceAccountToken: true },
          },
        },
      },
    });
    if (!asks.ok) throw new Error(asks.error);
    const built = buildJobPods({
      job,
      spec: asks.spec,
      shape: { ps: 1, workers: 1 },
      placement: [
        { role: 'ps', index: 0, server: 'a' },
        { role: 'worker', index: 0, server: 'b' },
      ],
    });
    expect(built.map((p) => p.spec?.automountServiceAccountToken)).toEqual([false, false, true]);
  });

  it('lets a role opt out of the sidecar', () => {
    const off = parseSpec({
      ...raw,
      replicaSpecs: {
        ...raw.replicaSpecs,
        Scheduler: {
          template: {
            metadata: { annotations: { 'optimus.dev/inject': 'false' } },
            spec: {
              containers: [{ name: 'mxnet', image: 'mxnet/python:1.9.1', command: ['python3', 'train.py'] }],
            },
          },
        },
      },
    });
    if (!off.ok) throw new Error(off.error);
    const [scheduler] = buildJobPods({
      job,
      spec: off.spec,
      shape: { ps: 1, workers: 1 },
      placement: [
        { role: 'ps', index: 0, server: 'a' },
        { role: 'worker', index: 0, server: 'b' },
      ],
    });
    expect(scheduler?.metadata?.annotations?.['optimus.dev/inject']).toBe('false');
    expect(scheduler?.spec?.containers[0]?.resources).toBeUndefined();
  });

  it('takes demands from the templates as the kube-scheduler counts them', () => {
    expect(demandOf(spec)).toEqual({
      ps: { cpu: 2, memory: 4 * 2 ** 30 },
      // containers 4 + 0.1 CPU; the init container's 2 CPU is a floor, not added
      worker: { cpu: 4.1, memory: 8 * 2 ** 30, 'nvidia.com/gpu': 1 },
      scheduler: { cpu: 0.1, memory: 256 * 2 ** 20 },
    });
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

describe('parseSpec refuses templates the controller cannot merge into', () => {
  const worker = (spec: Record<string, unknown>) => ({
    ...raw,
    replicaSpecs: { ...raw.replicaSpecs, Worker: { template: { spec } } },
  });
  const c = { name: 'main', image: 'i', command: ['python'] };
  it.each([
    {
      name: 'volumes not a list',
      spec: { containers: [c], volumes: 'oops' },
      error: 'Worker.template.spec.volumes',
    },
    { name: 'no containers', spec: { containers: [] }, error: 'Worker.template.spec.containers' },
    { name: 'no command', spec: { containers: [{ name: 'main', image: 'i' }] }, error: 'explicit command' },
    { name: 'env not a list', spec: { containers: [{ ...c, env: { A: '1' } }] }, error: 'containers.0.env' },
    {
      name: 'bad quantity',
      spec: { containers: [{ ...c, resources: { requests: { cpu: 'x' } } }] },
      error: 'requests.cpu',
    },
  ])('$name', ({ spec: s, error }) => {
    const r = parseSpec(worker(s));
    expect(r.ok ? '' : r.error).toContain(error);
  });

  it('finds the training container by annotation', () => {
    const r = parseSpec({
      ...raw,
      replicaSpecs: {
        ...raw.replicaSpecs,
        Worker: {
          template: {
            metadata: { annotations: { 'kubectl.kubernetes.io/default-container': 'train' } },
            spec: {
              containers: [
                { name: 'proxy', image: 'p' },
                { ...c, name: 'train' },
              ],
            },
          },
        },
      },
    });
    expect(r.ok).toBe(true);
  });
});
