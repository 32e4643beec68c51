/**
 * Builds the objects of one job's rollout from the job's pod templates: one MXNet scheduler pod,
 * p server pods, w worker pods and a headless Service. Pure: same input, same objects.
 *
 * The controller adds only what it owns and merges it into what the user wrote (see
 * docs/training-contract.md and ADR 0010): its labels, the sidecar request and per-worker batch
 * annotations, the placement pin (ANDed into every required node-affinity term of the template),
 * the `DMLC_*`/`OPTIMUS_*` environment of the training container, the log tee around its command,
 * the checkpoint volume when `spec.checkpoint.claimName` asks for it, and the pod identity fields
 * (name, hostname, subdomain, restartPolicy, grace period). Everything else — tolerations,
 * nodeSelector, imagePullSecrets, serviceAccountName, securityContext, volumes, init containers,
 * other containers, `env.valueFrom` — passes through as written.
 */
import type {
  V1Affinity,
  V1Container,
  V1EnvVar,
  V1NodeSelectorRequirement,
  V1OwnerReference,
  V1Pod,
  V1Service,
  V1Volume,
} from '@kubernetes/client-node';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import { effectiveGlobalBatch, perWorkerBatch } from '../../runtime/batch';
import { wrapWithTee } from './log-tee';
import type { OptimusJob, OptimusJobSpec } from '../api/optimus-job';
import { gracePeriodOf, schedulerPortOf, templateOf } from '../api/optimus-job';
import type { PodRole } from '../api/names';
import {
  ANNOTATION_BATCH_SIZE,
  ANNOTATION_CONTAINER,
  ANNOTATION_INJECT,
  ANNOTATION_LOG_FORMAT,
  API_VERSION,
  DMLC_PS_ROOT_PORT,
  DONE_FILE,
  KIND,
  LABEL_GENERATION,
  LABEL_INDEX,
  LABEL_JOB,
  LABEL_ROLE,
  LOG_PATH,
  podName,
} from '../api/names';
import { trainingContainerIndex } from './pod-template';

export const CHECKPOINT_VOLUME = 'optimus-checkpoint' as const;
const DEFAULT_CHECKPOINT_PATH = '/checkpoint';

export interface RolloutInput {
  readonly job: OptimusJob;
  readonly spec: OptimusJobSpec;
  readonly shape: JobShape;
  readonly placement: readonly TaskPlacement[];
  /** The target generation the pods are started for (their label); absent: unlabelled. */
  readonly generation?: number;
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

const pinRequirement = (server: string): V1NodeSelectorRequirement => ({
  key: 'metadata.name',
  operator: 'In',
  values: [server],
});

/**
 * Pinned to one node by a required node affinity on `metadata.name` (see ADR 0003), ANDed into
 * each of the template's own required terms (terms are ORed, requirements within a term ANDed),
 * so the user's constraints still hold. Preferred terms and pod (anti-)affinity pass through.
 */
export function pinTo(server: string, affinity: V1Affinity = {}): V1Affinity {
  const required = affinity.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const userTerms = required?.nodeSelectorTerms ?? [];
  const pin = pinRequirement(server);
  const terms =
    userTerms.length > 0
      ? userTerms.map((t) => ({ ...t, matchFields: [...(t.matchFields ?? []), pin] }))
      : [{ matchFields: [pin] }];
  return {
    ...affinity,
    nodeAffinity: {
      ...affinity.nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: { ...required, nodeSelectorTerms: terms },
    },
  };
}

/** The scheduler's address: `scheduler-0` under the job's headless Service. */
export const schedulerHost = (job: OptimusJob): string =>
  `scheduler-0.${job.metadata.name}.${job.metadata.namespace}.svc`;

const checkpointDirOf = (spec: OptimusJobSpec): string | undefined =>
  spec.checkpoint?.claimName || spec.checkpoint?.mountPath
    ? (spec.checkpoint.mountPath ?? DEFAULT_CHECKPOINT_PATH)
    : undefined;

/** The environment the controller owns (docs/training-contract.md lists it). */
export function managedEnv(input: RolloutInput, role: PodRole, index: number): V1EnvVar[] {
  const { job, spec, shape } = input;
  const dmlcRole = role === 'ps' ? 'server' : role;
  const ckpt = checkpointDirOf(spec);
  const vars: [string, string][] = [
    ['DMLC_ROLE', dmlcRole],
    ['DMLC_PS_ROOT_URI', schedulerHost(job)],
    ['DMLC_PS_ROOT_PORT', String(schedulerPortOf(spec))],
    ['DMLC_NUM_SERVER', String(shape.ps)],
    ['DMLC_NUM_WORKER', String(shape.workers)],
    ['DMLC_USE_KUBERNETES', '1'],
    ['OPTIMUS_NAMESPACE', job.metadata.namespace],
    ['OPTIMUS_JOB', job.metadata.name],
    ['OPTIMUS_ROLE', role],
    ['OPTIMUS_INDEX', String(index)],
    ['OPTIMUS_NUM_PS', String(shape.ps)],
    ['OPTIMUS_NUM_WORKERS', String(shape.workers)],
    ['OPTIMUS_SERVICE', `${job.metadata.name}.${job.metadata.namespace}.svc`],
    ['OPTIMUS_PORT', String(schedulerPortOf(spec))],
    ['OPTIMUS_MODE', spec.mode],
    ['OPTIMUS_KVSTORE', spec.mode === 'sync' ? 'dist_sync' : 'dist_async'],
    ['OPTIMUS_BATCH_SIZE', String(perWorkerBatch(spec.mode, spec.batchSize, shape.workers))],
    ['OPTIMUS_GLOBAL_BATCH_SIZE', String(effectiveGlobalBatch(spec.mode, spec.batchSize, shape.workers))],
    ['OPTIMUS_LOG_PATH', LOG_PATH],
    ['OPTIMUS_DONE_FILE', DONE_FILE],
    ['OPTIMUS_GRACE_SECONDS', String(gracePeriodOf(spec))],
    ...(ckpt ? ([['OPTIMUS_CHECKPOINT_DIR', ckpt]] as [string, string][]) : []),
  ];
  return vars.map(([name, value]) => ({ name, value }));
}

/**
 * Managed variables first, then the user's, minus any the controller owns (a stale
 * `DMLC_NUM_WORKER` copied from a hand-written MXJob would otherwise win, as the later duplicate).
 * `valueFrom` entries pass through unchanged; `PYTHONUNBUFFERED=1` is added unless the user set it.
 */
function envOf(input: RolloutInput, role: PodRole, index: number, user: readonly V1EnvVar[]): V1EnvVar[] {
  const managed = managedEnv(input, role, index);
  const owned = new Set(managed.map((e) => e.name));
  const kept = user.filter((e) => !owned.has(e.name));
  const unbuffered = kept.some((e) => e.name === 'PYTHONUNBUFFERED')
    ? []
    : [{ name: 'PYTHONUNBUFFERED', value: '1' }];
  return [...managed, ...unbuffered, ...kept];
}

function trainingContainer(input: RolloutInput, role: PodRole, index: number, c: V1Container): V1Container {
  const { spec } = input;
  const wrapped = wrapWithTee(c) ?? c; // parseSpec guarantees a command
  const mounts = [...(c.volumeMounts ?? [])];
  const ckptPath = checkpointDirOf(spec);
  if (spec.checkpoint?.claimName && ckptPath && !mounts.some((m) => m.mountPath === ckptPath))
    mounts.push({ name: CHECKPOINT_VOLUME, mountPath: ckptPath });
  const port = schedulerPortOf(spec);
  const ports = [...(c.ports ?? [])];
  if (role === 'scheduler' && !ports.some((p) => p.containerPort === port))
    ports.push({ name: 'ps-root', containerPort: port });
  return {
    ...wrapped,
    env: envOf(input, role, index, c.env ?? []),
    ...(ports.length ? { ports } : {}),
    ...(mounts.length ? { volumeMounts: mounts } : {}),
  };
}

function volumesOf(spec: OptimusJobSpec, user: readonly V1Volume[]): V1Volume[] {
  const claimName = spec.checkpoint?.claimName;
  if (!claimName || user.some((v) => v.name === CHECKPOINT_VOLUME)) return [...user];
  return [...user, { name: CHECKPOINT_VOLUME, persistentVolumeClaim: { claimName } }];
}

/** One task's pod from its role's template, pinned to `server`. */
export function buildTaskPod(input: RolloutInput, role: PodRole, index: number, server: string): V1Pod {
  const { job, spec, shape } = input;
  const template = templateOf(spec, role);
  const userAnnotations = template.metadata?.annotations ?? {};
  const main = trainingContainerIndex(template.spec.containers, userAnnotations);
  const containers = template.spec.containers.map((c, i) =>
    i === main ? trainingContainer(input, role, index, c) : c,
  );
  const volumes = volumesOf(spec, template.spec.volumes ?? []);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(job.metadata.name, role, index),
      namespace: job.metadata.namespace,
      labels: {
        ...template.metadata?.labels,
        ...labelsOf(job.metadata.name, role, index),
        ...(input.generation === undefined ? {} : { [LABEL_GENERATION]: String(input.generation) }),
      },
      annotations: {
        ...userAnnotations,
        // The user may turn the sidecar off per role ("false"); the default is on.
        [ANNOTATION_INJECT]: userAnnotations[ANNOTATION_INJECT] ?? 'true',
        [ANNOTATION_CONTAINER]: containers[main]?.name ?? '',
        [ANNOTATION_BATCH_SIZE]: String(perWorkerBatch(spec.mode, spec.batchSize, shape.workers)),
        ...(spec.logFormat ? { [ANNOTATION_LOG_FORMAT]: spec.logFormat } : {}),
      },
      ownerReferences: [ownerReferenceOf(job)],
    },
    spec: {
      ...template.spec,
      automountServiceAccountToken: template.spec.automountServiceAccountToken ?? false,
      restartPolicy: 'Never',
      hostname: `${role}-${index}`,
      subdomain: job.metadata.name,
      terminationGracePeriodSeconds: gracePeriodOf(spec),
      affinity: pinTo(server, template.spec.affinity),
      containers,
      ...(volumes.length ? { volumes } : {}),
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
