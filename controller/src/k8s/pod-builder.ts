/**
 * Builds the objects of one job's rollout: one MXNet scheduler pod, p server pods, w worker pods
 * and a headless Service. Pure: same input, same objects.
 */
import type {
  V1EnvVar,
  V1OwnerReference,
  V1Pod,
  V1Service,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { JobShape, TaskPlacement } from '../scheduling/types';
import type { OptimusJob, OptimusJobSpec } from './optimus-job';
import { gracePeriodOf } from './optimus-job';
import type { PodRole } from './names';
import {
  ANNOTATION_BATCH_SIZE,
  ANNOTATION_INJECT,
  ANNOTATION_LOG_FORMAT,
  API_VERSION,
  DMLC_PS_ROOT_PORT,
  KIND,
  LABEL_INDEX,
  LABEL_JOB,
  LABEL_ROLE,
  LOG_PATH,
  podName,
} from './names';

/** What the MXNet scheduler pod asks for: it only brokers connections. */
export const SCHEDULER_REQUESTS = { cpu: '100m', memory: '256Mi' } as const;
export const CHECKPOINT_VOLUME = 'optimus-checkpoint' as const;
const DEFAULT_CHECKPOINT_PATH = '/checkpoint';

/**
 * The training command runs as PID 1 of its container (`exec`), so it gets the SIGTERM of a
 * checkpoint request itself; `tee` copies its output into the shared log through a FIFO.
 */
export const TEE_WRAPPER =
  'mkdir -p "$(dirname "$OPTIMUS_LOG_PATH")" && rm -f /tmp/optimus-log.fifo && mkfifo /tmp/optimus-log.fifo && ' +
  '{ tee -a "$OPTIMUS_LOG_PATH" < /tmp/optimus-log.fifo & } && exec "$@" > /tmp/optimus-log.fifo 2>&1';

export interface RolloutInput {
  readonly job: OptimusJob;
  readonly spec: OptimusJobSpec;
  readonly shape: JobShape;
  readonly placement: readonly TaskPlacement[];
}

export const ownerReferenceOf = (job: OptimusJob): V1OwnerReference => ({
  apiVersion: API_VERSION,
  kind: KIND,
  name: job.metadata.name,
  uid: job.metadata.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

export const labelsOf = (job: string, role: PodRole, index: number): Record<string, string> => ({
  [LABEL_JOB]: job,
  [LABEL_ROLE]: role,
  [LABEL_INDEX]: String(index),
});

/** Pinned to one node by a required node affinity on `metadata.name` (see ADR 0003). */
export const pinTo = (server: string) => ({
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [server] }] }],
    },
  },
});

/** The scheduler's address: `scheduler-0` under the job's headless Service. */
export const schedulerHost = (job: OptimusJob): string =>
  `scheduler-0.${job.metadata.name}.${job.metadata.namespace}.svc`;

function envOf(input: RolloutInput, role: PodRole): V1EnvVar[] {
  const managed = managedEnv(input, role);
  // The controller owns the membership variables: a user value for one of them (e.g. a stale
  // DMLC_NUM_WORKER copied from a hand-written MXJob) is dropped rather than left to override it.
  const owned = new Set(managed.map((e) => e.name));
  const user = (input.spec.container.env ?? [])
    .filter((e) => !owned.has(e.name))
    .map((e) => ({ name: e.name, value: e.value ?? '' }));
  return [...managed, ...user];
}

function managedEnv(input: RolloutInput, role: PodRole): V1EnvVar[] {
  const dmlcRole = role === 'ps' ? 'server' : role;
  return [
    { name: 'DMLC_ROLE', value: dmlcRole },
    { name: 'DMLC_PS_ROOT_URI', value: schedulerHost(input.job) },
    { name: 'DMLC_PS_ROOT_PORT', value: String(input.spec.container.port ?? DMLC_PS_ROOT_PORT) },
    { name: 'DMLC_NUM_SERVER', value: String(input.shape.ps) },
    { name: 'DMLC_NUM_WORKER', value: String(input.shape.workers) },
    { name: 'DMLC_USE_KUBERNETES', value: '1' },
    { name: 'PYTHONUNBUFFERED', value: '1' },
    { name: 'OPTIMUS_LOG_PATH', value: LOG_PATH },
    { name: 'OPTIMUS_KVSTORE', value: input.spec.mode === 'sync' ? 'dist_sync' : 'dist_async' },
    ...(input.spec.checkpoint?.claimName
      ? [
          {
            name: 'OPTIMUS_CHECKPOINT_DIR',
            value: input.spec.checkpoint.mountPath ?? DEFAULT_CHECKPOINT_PATH,
          },
        ]
      : []),
  ];
}

function checkpointVolume(spec: OptimusJobSpec): { volumes: V1Volume[]; mounts: V1VolumeMount[] } {
  const claimName = spec.checkpoint?.claimName;
  if (!claimName) return { volumes: [], mounts: [] };
  return {
    volumes: [{ name: CHECKPOINT_VOLUME, persistentVolumeClaim: { claimName } }],
    mounts: [{ name: CHECKPOINT_VOLUME, mountPath: spec.checkpoint?.mountPath ?? DEFAULT_CHECKPOINT_PATH }],
  };
}

/** One task's pod, pinned to `server`. */
export function buildTaskPod(input: RolloutInput, role: PodRole, index: number, server: string): V1Pod {
  const { job, spec } = input;
  const resources =
    role === 'scheduler'
      ? { requests: { ...SCHEDULER_REQUESTS } }
      : role === 'ps'
        ? spec.ps.resources
        : spec.worker.resources;
  const ckpt = checkpointVolume(spec);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(job.metadata.name, role, index),
      namespace: job.metadata.namespace,
      labels: labelsOf(job.metadata.name, role, index),
      annotations: {
        [ANNOTATION_INJECT]: 'true',
        [ANNOTATION_BATCH_SIZE]: String(spec.batchSize),
        ...(spec.logFormat ? { [ANNOTATION_LOG_FORMAT]: spec.logFormat } : {}),
      },
      ownerReferences: [ownerReferenceOf(job)],
    },
    spec: {
      restartPolicy: 'Never',
      hostname: `${role}-${index}`,
      subdomain: job.metadata.name,
      terminationGracePeriodSeconds: gracePeriodOf(spec),
      affinity: pinTo(server),
      containers: [
        {
          name: 'main',
          image: spec.container.image,
          ...(spec.container.imagePullPolicy ? { imagePullPolicy: spec.container.imagePullPolicy } : {}),
          command: ['/bin/sh', '-c', TEE_WRAPPER, 'optimus-train'],
          args: [...spec.container.command, ...(spec.container.args ?? [])],
          env: envOf(input, role),
          resources: resources as NonNullable<V1Pod['spec']>['containers'][number]['resources'] & object,
          ports:
            role === 'scheduler'
              ? [{ name: 'ps-root', containerPort: spec.container.port ?? DMLC_PS_ROOT_PORT }]
              : [],
          volumeMounts: ckpt.mounts,
        },
      ],
      volumes: ckpt.volumes,
    },
  };
}

/** All pods of a rollout. The scheduler sits on the first server's node (ps 0). */
export function buildJobPods(input: RolloutInput): V1Pod[] {
  const first = input.placement.find((p) => p.role === 'ps' && p.index === 0) ?? input.placement[0];
  const pods: V1Pod[] = first ? [buildTaskPod(input, 'scheduler', 0, first.server)] : [];
  for (const p of [...input.placement].sort((a, b) => a.role.localeCompare(b.role) || a.index - b.index))
    pods.push(buildTaskPod(input, p.role, p.index, p.server));
  return pods;
}

/** Headless Service: stable DNS for `scheduler-0.<job>` even before the pod is ready. */
export function buildHeadlessService(job: OptimusJob, port = DMLC_PS_ROOT_PORT): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: job.metadata.name,
      namespace: job.metadata.namespace,
      labels: { [LABEL_JOB]: job.metadata.name },
      ownerReferences: [ownerReferenceOf(job)],
    },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { [LABEL_JOB]: job.metadata.name },
      ports: [{ name: 'ps-root', port, targetPort: port }],
    },
  };
}
