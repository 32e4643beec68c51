/**
 * Which task a pod is, for a sidecar that must publish under `optimus/v1/<ns>/<job>/<role>/<index>`.
 * Each field is taken from the first source that has it, in this documented order
 * (docs/training-contract.md, section 7):
 *
 * 1. Optimus' labels `optimus.dev/job`, `optimus.dev/role`, `optimus.dev/index` (pods the
 *    controller builds, or anyone who labels a pod that way);
 * 2. Kubeflow's `training.kubeflow.org/job-name`, `…/replica-type`, `…/replica-index` (TFJob,
 *    MXJob, PyTorchJob… pods of the Training Operator);
 * 3. explicit annotations with Optimus' keys, for pods whose labels the user does not control;
 * 4. for a pod with only `optimus.dev/inject: "true"` (ADR 0038), its owner: a batch Job's
 *    `batch.kubernetes.io/job-name` (or legacy `job-name`) label, a ReplicaSet's Deployment (the
 *    owner's name without its `pod-template-hash`), another controller owner's name; else the
 *    stem of the pod's `generateName`; else the pod's name without a trailing `-<ordinal>`.
 *
 * The index, after Optimus' and Kubeflow's labels and the annotation, is an Indexed Job's
 * completion index (`batch.kubernetes.io/job-completion-index`), else the pod name's ordinal
 * (`podOrdinal`: a trailing number, else a hash of the name). A pod named by `generateName` has no
 * name yet at admission: its index is then `from-pod-name`, and the sidecar derives it from its own
 * name with the same function. Without a role the pod is a `worker`. A pod without a job name, or
 * with a role or index that means nothing to Optimus, is not identified (with a reason: the webhook
 * warns, it never skips a pod silently).
 */
import { podOrdinal } from '../../../../shared/src/pod-ordinal';
import { nameSegmentSchema } from '../../../../shared/src/topics';
import type { PodRole } from '../api/names';
import type { OwnerSource, PodMeta } from './owner-identity';
import { COMPLETION_INDEX, jobFromOwner, ordinalName } from './owner-identity';

export const FROM_POD_NAME = 'from-pod-name' as const;
import {
  ANNOTATION_INDEX,
  ANNOTATION_JOB,
  ANNOTATION_ROLE,
  LABEL_INDEX,
  LABEL_JOB,
  LABEL_ROLE,
} from '../api/names';

export const KUBEFLOW_JOB_NAME = 'training.kubeflow.org/job-name' as const;
export const KUBEFLOW_REPLICA_TYPE = 'training.kubeflow.org/replica-type' as const;
export const KUBEFLOW_REPLICA_INDEX = 'training.kubeflow.org/replica-index' as const;

/** Kubeflow replica types (lower-cased, as the operator labels them) → Optimus roles. */
const KUBEFLOW_ROLES: Readonly<Record<string, PodRole>> = {
  ps: 'ps',
  server: 'ps',
  worker: 'worker',
  scheduler: 'scheduler',
  chief: 'scheduler',
  master: 'scheduler',
};

export type IdentitySource =
  'optimus-labels' | 'kubeflow-labels' | 'annotations' | OwnerSource | 'pod-name' | 'default';

export interface PodIdentity {
  readonly job: string;
  readonly role: PodRole;
  /** `from-pod-name`: the sidecar derives it from its pod's name (not known at admission). */
  readonly index: number | typeof FROM_POD_NAME;
  /** Where the job name came from (for logs and tests). */
  readonly source: IdentitySource;
}

export type Identified =
  { readonly ok: true; readonly identity: PodIdentity } | { readonly ok: false; readonly reason: string };

type Strings = Readonly<Record<string, string>>;

function firstOf(
  sources: readonly [IdentitySource, string | undefined][],
): [IdentitySource, string] | undefined {
  for (const [source, v] of sources) if (v !== undefined && v !== '') return [source, v];
  return undefined;
}

/** Identifies a pod from its labels and annotations (see the module comment for the order). */
export function identify(labels: Strings = {}, annotations: Strings = {}, meta: PodMeta = {}): Identified {
  const job =
    firstOf([
      ['optimus-labels', labels[LABEL_JOB]],
      ['kubeflow-labels', labels[KUBEFLOW_JOB_NAME]],
      ['annotations', annotations[ANNOTATION_JOB]],
    ]) ?? jobFromOwner(labels, meta);
  if (!job)
    return {
      ok: false,
      reason: `no job name: set the annotation ${ANNOTATION_JOB} (the pod has no owner, generateName or name to take one from)`,
    };
  if (!nameSegmentSchema.safeParse(job[1]).success)
    return { ok: false, reason: `job name "${job[1]}" is not a lowercase RFC 1123 label` };
  const kubeflowType = labels[KUBEFLOW_REPLICA_TYPE]?.toLowerCase();
  const role = firstOf([
    ['optimus-labels', labels[LABEL_ROLE]],
    [
      'kubeflow-labels',
      kubeflowType === undefined ? undefined : (KUBEFLOW_ROLES[kubeflowType] ?? `?${kubeflowType}`),
    ],
    ['annotations', annotations[ANNOTATION_ROLE]],
  ]) ?? ['default', 'worker'];
  if (role[1] !== 'ps' && role[1] !== 'worker' && role[1] !== 'scheduler')
    return {
      ok: false,
      reason: `role "${role[1].replace(/^\?/, '')}" is not one Optimus models (ps, worker, scheduler; Kubeflow ps/server/worker/chief/master)`,
    };
  const podRole: PodRole = role[1];
  const index = firstOf([
    ['optimus-labels', labels[LABEL_INDEX]],
    ['kubeflow-labels', labels[KUBEFLOW_REPLICA_INDEX]],
    ['annotations', annotations[ANNOTATION_INDEX]],
    ['batch-job', annotations[COMPLETION_INDEX] ?? labels[COMPLETION_INDEX]],
  ]);
  const identity = { job: job[1], role: podRole, source: job[0] };
  if (index === undefined) return { ok: true, identity: { ...identity, index: nameIndex(meta) } };
  if (!/^\d{1,6}$/.test(index[1]))
    return { ok: false, reason: `index "${index[1]}" is not a non-negative integer` };
  return { ok: true, identity: { ...identity, index: Number(index[1]) } };
}

/**
 * The index from the pod's name: a trailing ordinal; else, for a replica of some owner (a
 * Deployment's random name), its hash; a hand-made pod without an ordinal is 0 (as before). An
 * unnamed pod (generateName) defers to its sidecar, which applies `podOrdinal` to its name.
 */
function nameIndex(meta: PodMeta): number | typeof FROM_POD_NAME {
  if (meta.name) {
    const owned = (meta.ownerReferences ?? []).length > 0;
    return ordinalName(meta.name) !== null || owned ? podOrdinal(meta.name) : 0;
  }
  return meta.generateName ? FROM_POD_NAME : 0;
}
