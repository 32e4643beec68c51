/** Names shared by the controller, its pods, the webhook, the chart and the sidecar. */
export const GROUP = 'optimus.dev' as const;
/** v1alpha2: a full PodTemplateSpec per role (`spec.replicaSpecs`); v1alpha1 is gone (never released). */
export const VERSION = 'v1alpha2' as const;
export const PLURAL = 'optimusjobs' as const;
export const KIND = 'OptimusJob' as const;
export const API_VERSION = `${GROUP}/${VERSION}` as const;

export const LABEL_JOB = 'optimus.dev/job' as const;
export const LABEL_ROLE = 'optimus.dev/role' as const;
export const LABEL_INDEX = 'optimus.dev/index' as const;
/** Asks the webhook for the sidecar; any training pod can opt in with it (see docs/training-contract.md, section 7). */
export const ANNOTATION_INJECT = 'optimus.dev/inject' as const;
/**
 * Explicit identity of a hand-made pod (same keys as the labels): read after our labels and
 * Kubeflow's `training.kubeflow.org/*` labels (see `webhook/identity.ts`).
 */
export const ANNOTATION_JOB = LABEL_JOB;
export const ANNOTATION_ROLE = LABEL_ROLE;
export const ANNOTATION_INDEX = LABEL_INDEX;
/** The file the training program's output is copied to and the sidecar follows. */
export const ANNOTATION_LOG_PATH = 'optimus.dev/log-path' as const;
/** Names the training container of a pod (else kubectl's default-container annotation, else the first). */
export const ANNOTATION_CONTAINER = 'optimus.dev/container' as const;
export const ANNOTATION_DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container' as const;
/** `"false"`: the program writes the log file itself; the webhook leaves its command alone. */
export const ANNOTATION_CAPTURE_OUTPUT = 'optimus.dev/capture-output' as const;
/** Container names Kubeflow's operators give the training container (TFJob, MXJob, PyTorchJob, …). */
export const KUBEFLOW_CONTAINER_NAMES = ['tensorflow', 'mxnet', 'pytorch', 'paddle', 'xgboost'] as const;
export { LOG_FORMATS } from '../../../../shared/src/schemas';
/** Namespaces the webhook never injects into, whatever its namespaceSelector says. */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;
/** Set by the webhook on pods it injected (idempotence marker, and for humans). */
export const ANNOTATION_INJECTED = 'optimus.dev/injected' as const;
/** Read by the webhook into the sidecar's environment: this pod's PER-WORKER batch (see runtime/batch.ts). */
export const ANNOTATION_BATCH_SIZE = 'optimus.dev/batch-size' as const;
export const ANNOTATION_LOG_FORMAT = 'optimus.dev/log-format' as const;

export const POD_ROLES = ['scheduler', 'ps', 'worker'] as const;
export type PodRole = (typeof POD_ROLES)[number];

/** ps-lite's default scheduler port. */
export const DMLC_PS_ROOT_PORT = 9091;
/** Shared emptyDir the training command tees its log into and the sidecar reads. */
export const LOG_VOLUME = 'optimus-log' as const;
export const LOG_DIR = '/var/log/optimus' as const;
/** The default of `optimus.dev/log-path`; a custom path must lie under {@link LOG_DIR}. */
export const LOG_PATH = `${LOG_DIR}/train.log` as const;
/** Created by the log tee in the log directory when the training program ends on its own: the sidecar drains and exits. */
export const doneFileIn = (logDir: string): string => `${logDir}/.done`;
export const DONE_FILE = doneFileIn(LOG_DIR);
export const SIDECAR_NAME = 'optimus-sidecar' as const;
export const FIELD_MANAGER = 'optimus-controller' as const;

/** `namespace/name` ↔ parts. */
export const jobIdOf = (namespace: string, name: string): string => `${namespace}/${name}`;
export function splitJobId(id: string): { namespace: string; name: string } | null {
  const [namespace, name, ...rest] = id.split('/');
  return namespace && name && rest.length === 0 ? { namespace, name } : null;
}

/** Pod name of one task: `<job>-<role>-<index>`. */
export const podName = (job: string, role: PodRole, index: number): string => `${job}-${role}-${index}`;

/** The CRD's upper bounds of `spec.scaling.maxPs` and `maxWorkers` (a test holds them equal). */
export const MAX_PS = 256;
export const MAX_WORKERS = 1024;
/** Longest DNS label (RFC 1123 / RFC 1035): hostnames, Service names; also the longest label value. */
export const DNS_LABEL_MAX = 63;

/** The highest task index of each role: one MXNet scheduler, up to the CRD's maximum replicas. */
const HIGHEST_INDEX: Readonly<Record<PodRole, number>> = {
  scheduler: 0,
  ps: MAX_PS - 1,
  worker: MAX_WORKERS - 1,
};

/** Characters {@link podName} can append to a job's name: `-worker-1023` and `-scheduler-0` (12). */
export const LONGEST_POD_SUFFIX = Math.max(
  ...POD_ROLES.map((role) => podName('', role, HIGHEST_INDEX[role]).length),
);

/**
 * Longest job name that works (51): every pod name `<job>-<role>-<index>` must stay a DNS-1123
 * label (it is the pod's hostname by Kubernetes' default) for every index the CRD allows. The
 * job's other derived names are shorter: the headless Service, the pods' subdomain and the
 * `optimus.dev/job` label value are the name itself (≤ 63).
 */
export const MAX_JOB_NAME_LENGTH = DNS_LABEL_MAX - LONGEST_POD_SUFFIX;

/**
 * A DNS-1035 label: the job's name is its headless Service's name (which must start with a
 * letter) and its pods' `subdomain` (no dots). Object names in general may be DNS-1123
 * subdomains, so the API server alone lets `1job` or `a.b` through. The CRD's CEL rule uses
 * this same pattern (a test holds them equal).
 */
export const JOB_NAME_PATTERN = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Why an OptimusJob of this name can never run, or null when the name works. */
export function jobNameProblem(name: string): string | null {
  if (!JOB_NAME_PATTERN.test(name))
    return (
      `metadata.name "${name}" must be a DNS-1035 label (lowercase letters, digits and '-', ` +
      `starting with a letter, ending with a letter or digit): it names the job's headless Service`
    );
  if (name.length > MAX_JOB_NAME_LENGTH)
    return (
      `metadata.name "${name}" has ${name.length} characters, at most ${MAX_JOB_NAME_LENGTH} are allowed: ` +
      `pod names such as "${podName(name, 'worker', HIGHEST_INDEX.worker)}" must be DNS-1123 labels ` +
      `of at most ${DNS_LABEL_MAX} characters`
    );
  return null;
}
