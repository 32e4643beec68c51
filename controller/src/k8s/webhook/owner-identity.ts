/**
 * The job name of a pod that only says `optimus.dev/inject: "true"` (ADR 0038): taken from what
 * Kubernetes already put on the pod at admission — its owner's labels and references, its
 * `generateName`, its name. Pure: the webhook never asks the API server.
 */
export type OwnerSource = 'batch-job' | 'deployment' | 'owner' | 'generate-name';

export interface PodMeta {
  readonly name?: string | undefined;
  readonly generateName?: string | undefined;
  readonly ownerReferences?:
    | readonly { readonly kind: string; readonly name: string; readonly controller?: boolean | undefined }[]
    | undefined;
}

/** Labels the Job controller puts on its pods (the prefixed one since Kubernetes 1.27). */
export const BATCH_JOB_NAME = 'batch.kubernetes.io/job-name' as const;
export const LEGACY_JOB_NAME = 'job-name' as const;
/** An Indexed Job pod's index (annotation, and label since 1.28); `JOB_COMPLETION_INDEX` reads it. */
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index' as const;
export const POD_TEMPLATE_HASH = 'pod-template-hash' as const;

type Strings = Readonly<Record<string, string>>;

/** `name` without a trailing `-<digits>` ordinal, or null when it has none. */
export function ordinalName(name: string): string | null {
  const m = /^(.+)-\d{1,7}$/.exec(name);
  return m?.[1] ?? null;
}

const stripSuffix = (name: string, suffix: string | undefined): string =>
  suffix && name.endsWith(`-${suffix}`) ? name.slice(0, -suffix.length - 1) : name;

/** A ReplicaSet `<deployment>-<pod-template-hash>` → the Deployment's name. */
function deploymentOf(replicaSet: string, hash: string | undefined): string {
  if (hash) return stripSuffix(replicaSet, hash);
  return /^(.+)-[a-z0-9]{1,10}$/.exec(replicaSet)?.[1] ?? replicaSet;
}

export function jobFromOwner(labels: Strings, meta: PodMeta): [OwnerSource | 'pod-name', string] | undefined {
  const batch = labels[BATCH_JOB_NAME] ?? labels[LEGACY_JOB_NAME];
  if (batch) return ['batch-job', batch];
  const owners = meta.ownerReferences ?? [];
  const owner = owners.find((o) => o.controller === true) ?? owners[0];
  const hash = labels[POD_TEMPLATE_HASH];
  if (owner?.kind === 'ReplicaSet') return ['deployment', deploymentOf(owner.name, hash)];
  if (owner?.kind === 'Job') return ['batch-job', owner.name];
  if (owner) return ['owner', owner.name];
  if (meta.generateName) {
    const stem = meta.generateName.replace(/-+$/, '');
    return ['generate-name', stripSuffix(stem, hash)];
  }
  if (meta.name) return ['pod-name', ordinalName(meta.name) ?? meta.name];
  return undefined;
}
