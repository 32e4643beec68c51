/** Names shared by the controller, its pods, the webhook, the chart and the sidecar. */
export const GROUP = 'optimus.dev' as const;
export const VERSION = 'v1alpha1' as const;
export const PLURAL = 'optimusjobs' as const;
export const KIND = 'OptimusJob' as const;
export const API_VERSION = `${GROUP}/${VERSION}` as const;

export const LABEL_JOB = 'optimus.dev/job' as const;
export const LABEL_ROLE = 'optimus.dev/role' as const;
export const LABEL_INDEX = 'optimus.dev/index' as const;
/** Asks the webhook for the sidecar; any MXNet pod can opt in with it. */
export const ANNOTATION_INJECT = 'optimus.dev/inject' as const;
/** Set by the webhook on pods it injected (idempotence marker, and for humans). */
export const ANNOTATION_INJECTED = 'optimus.dev/injected' as const;
/** Read by the webhook into the sidecar's environment. */
export const ANNOTATION_BATCH_SIZE = 'optimus.dev/batch-size' as const;
export const ANNOTATION_LOG_FORMAT = 'optimus.dev/log-format' as const;

export const POD_ROLES = ['scheduler', 'ps', 'worker'] as const;
export type PodRole = (typeof POD_ROLES)[number];

/** ps-lite's default scheduler port. */
export const DMLC_PS_ROOT_PORT = 9091;
/** Shared emptyDir the training command tees its log into and the sidecar reads. */
export const LOG_VOLUME = 'optimus-log' as const;
export const LOG_DIR = '/var/log/optimus' as const;
export const LOG_PATH = `${LOG_DIR}/train.log` as const;
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
