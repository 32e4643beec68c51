/**
 * Which task a pod is, for a sidecar that must publish under `optimus/v1/<ns>/<job>/<role>/<index>`.
 * Each field is taken from the first source that has it, in this documented order
 * (docs/training-contract.md, section 7):
 *
 * 1. Optimus' labels `optimus.dev/job`, `optimus.dev/role`, `optimus.dev/index` (pods the
 *    controller builds, or anyone who labels a pod that way);
 * 2. Kubeflow's `training.kubeflow.org/job-name`, `…/replica-type`, `…/replica-index` (TFJob,
 *    MXJob, PyTorchJob… pods of the Training Operator);
 * 3. explicit annotations with Optimus' keys, for pods whose labels the user does not control.
 *
 * Without a role the pod is a `worker`; without an index it is index 0. A pod without a job name,
 * or with a role or index that means nothing to Optimus, is not identified.
 */
import { nameSegmentSchema } from '../../../../shared/src/topics';
import type { PodRole } from '../api/names';
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

export type IdentitySource = 'optimus-labels' | 'kubeflow-labels' | 'annotations' | 'default';

export interface PodIdentity {
  readonly job: string;
  readonly role: PodRole;
  readonly index: number;
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
export function identify(labels: Strings = {}, annotations: Strings = {}): Identified {
  const job = firstOf([
    ['optimus-labels', labels[LABEL_JOB]],
    ['kubeflow-labels', labels[KUBEFLOW_JOB_NAME]],
    ['annotations', annotations[ANNOTATION_JOB]],
  ]);
  if (!job)
    return {
      ok: false,
      reason: `no job name: set the label ${LABEL_JOB} (or Kubeflow's ${KUBEFLOW_JOB_NAME}, or the annotation ${ANNOTATION_JOB})`,
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
  const index = firstOf([
    ['optimus-labels', labels[LABEL_INDEX]],
    ['kubeflow-labels', labels[KUBEFLOW_REPLICA_INDEX]],
    ['annotations', annotations[ANNOTATION_INDEX]],
  ]) ?? ['default', '0'];
  if (!/^\d{1,6}$/.test(index[1]))
    return { ok: false, reason: `index "${index[1]}" is not a non-negative integer` };
  return { ok: true, identity: { job: job[1], role: role[1], index: Number(index[1]), source: job[0] } };
}
