/**
 * The webhook's pure core: `mutate(pod) → outcome`. A pod annotated `optimus.dev/inject: "true"`
 * that can be identified (see `identity.ts`) gets:
 *
 * - the sidecar (native init container with `restartPolicy: Always`, or a classic container),
 *   non-root, read-only root filesystem, no capabilities, seccomp `RuntimeDefault`;
 * - a shared emptyDir at the directory of the log path (`optimus.dev/log-path`, default
 *   `/var/log/optimus/train.log`) in the training container and the sidecar — or the user's own
 *   volume, when the training container already mounts one there;
 * - unless `optimus.dev/capture-output: "false"`, the training container's command behind the log
 *   tee (`log-tee.ts`), so its output reaches the sidecar without the user changing the command.
 *
 * Never throws and never returns a half-made pod: a pod that is not requested, already injected, in
 * a system namespace, malformed where the webhook merges, or unidentifiable comes back unchanged
 * with a warning saying why. Idempotent: an injected pod is recognised and left alone.
 */
import { posix } from 'node:path';
import type { V1Container, V1EnvVar, V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { z } from 'zod';
import { isTeeWrapped, wrapWithTee } from '../rollout/log-tee';
import {
  doneFileIn,
  ANNOTATION_BATCH_SIZE,
  ANNOTATION_CAPTURE_OUTPUT,
  ANNOTATION_INJECT,
  ANNOTATION_INJECTED,
  ANNOTATION_LOG_FORMAT,
  ANNOTATION_LOG_PATH,
  LOG_FORMATS,
  LOG_PATH,
  LOG_VOLUME,
  SIDECAR_NAME,
  SYSTEM_NAMESPACES,
} from '../api/names';
import { jobBrokerSecretName } from '../broker/broker-credentials';
import type { PodIdentity } from './identity';
import { FROM_POD_NAME, identify } from './identity';
import { hidesImageFiles, logPathOf } from './log-path';
import type { SidecarConfig } from './sidecar-config';
import { chooseTrainingContainer } from './training-container';
import { CREDENTIALS_DIR, CREDENTIALS_VOLUME, SIDECAR_UID } from './sidecar-config';

/** What became of a pod; the kind is also the label of the webhook's counter. */
export type MutateOutcome =
  | { readonly kind: 'not-requested' }
  | { readonly kind: 'already-injected' }
  | { readonly kind: 'excluded'; readonly warning: string }
  | { readonly kind: 'malformed'; readonly warning: string }
  | { readonly kind: 'unidentified'; readonly warning: string }
  | { readonly kind: 'injected'; readonly pod: V1Pod; readonly warnings: readonly string[] };
export type MutateKind = MutateOutcome['kind'];
export const MUTATE_KINDS: readonly MutateKind[] = [
  'not-requested',
  'already-injected',
  'excluded',
  'malformed',
  'unidentified',
  'injected',
];

/** The values Optimus' boolean annotations accept; anything else gets a warning (ADR 0038). */
const BOOLEAN_VALUES: readonly string[] = ['true', 'false'];

export const wantsInjection = (pod: V1Pod): boolean =>
  pod.metadata?.annotations?.[ANNOTATION_INJECT] === 'true';

const hasSidecar = (pod: V1Pod): boolean =>
  [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].some((c) => c.name === SIDECAR_NAME);

/** The fields the webhook reads or merges into must have their API types; the rest is not its business. */
const named = z.looseObject({ name: z.string().min(1) });
const container = z.looseObject({
  name: z.string().min(1),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(named).optional(),
  volumeMounts: z.array(z.looseObject({ name: z.string(), mountPath: z.string() })).optional(),
});
const podShape = z.looseObject({
  metadata: z
    .looseObject({
      labels: z.record(z.string(), z.string()).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  spec: z.looseObject({
    containers: z.array(container).min(1),
    initContainers: z.array(container).optional(),
    volumes: z.array(named).optional(),
  }),
});

function shapeProblem(pod: unknown): string | null {
  const r = podShape.safeParse(pod);
  if (r.success) return null;
  const i = r.error.issues[0];
  return `${i?.path.join('.') ?? 'pod'}: ${i?.message ?? 'invalid'}`;
}

interface Plan {
  readonly identity: PodIdentity;
  readonly namespace: string;
  readonly logPath: string;
  readonly logDir: string;
  /** The volume shared at logDir: the user's, or ours (added). */
  readonly logVolume: string;
  readonly addVolume: boolean;
  readonly main: number;
}

/**
 * True for a pod whose per-job Secret the controller may never create (ADR 0038): it creates
 * `<job>-optimus-broker` before the pods of an OptimusJob, and for nothing else yet.
 */
function credentialsMayNeverCome(pod: V1Pod, cfg: SidecarConfig): boolean {
  if (!cfg.perJobCredentials) return false;
  return !(pod.metadata?.ownerReferences ?? []).some(
    (o) => o.kind === 'OptimusJob' && o.apiVersion.startsWith('optimus.dev/'),
  );
}

/** The Secret the sidecar's broker password comes from, if any. */
function credentialsSecretOf(plan: Plan, cfg: SidecarConfig): string | undefined {
  if (cfg.perJobCredentials) return jobBrokerSecretName(plan.identity.job);
  return cfg.credentialsSecret;
}

function sidecarEnv(pod: V1Pod, plan: Plan, cfg: SidecarConfig, warnings: string[]): V1EnvVar[] {
  const ann = pod.metadata?.annotations ?? {};
  const { identity: id } = plan;
  const env: V1EnvVar[] = [
    { name: 'OPTIMUS_NAMESPACE', value: plan.namespace },
    { name: 'OPTIMUS_JOB', value: id.job },
    { name: 'OPTIMUS_ROLE', value: id.role },
    // An unnamed pod (generateName) learns its name only once created: the sidecar derives its index.
    id.index === FROM_POD_NAME
      ? { name: 'OPTIMUS_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }
      : { name: 'OPTIMUS_INDEX', value: String(id.index) },
    { name: 'OPTIMUS_BROKER_URL', value: cfg.brokerUrl },
    { name: 'OPTIMUS_LOG_PATH', value: plan.logPath },
    { name: 'OPTIMUS_STATE_DIR', value: `${plan.logDir}/.sidecar` },
    { name: 'OPTIMUS_DONE_FILE', value: doneFileIn(plan.logDir) },
  ];
  const batch = ann[ANNOTATION_BATCH_SIZE];
  if (batch !== undefined && /^[1-9]\d*$/.test(batch)) env.push({ name: 'OPTIMUS_BATCH_SIZE', value: batch });
  else if (batch !== undefined)
    warnings.push(`optimus: ${ANNOTATION_BATCH_SIZE} "${batch}" is not a positive integer; ignored`);
  const format = ann[ANNOTATION_LOG_FORMAT];
  if (format !== undefined && (LOG_FORMATS as readonly string[]).includes(format))
    env.push({ name: 'OPTIMUS_LOG_FORMAT', value: format });
  else if (format !== undefined)
    warnings.push(
      `optimus: ${ANNOTATION_LOG_FORMAT} "${format}" is not one of ${LOG_FORMATS.join(', ')}; using auto`,
    );
  // Per-job identities: the sidecar's user name is its task's client id (it derives it itself).
  if (cfg.perJobCredentials)
    env.push(
      { name: 'OPTIMUS_BROKER_PASSWORD_FILE', value: `${CREDENTIALS_DIR}/password` },
      ...(credentialsMayNeverCome(pod, cfg)
        ? [{ name: 'OPTIMUS_BROKER_PASSWORD_OPTIONAL', value: 'true' }]
        : []),
    );
  else if (cfg.credentialsSecret)
    env.push(
      {
        name: 'OPTIMUS_BROKER_USERNAME',
        valueFrom: { secretKeyRef: { name: cfg.credentialsSecret, key: 'username' } },
      },
      { name: 'OPTIMUS_BROKER_PASSWORD_FILE', value: `${CREDENTIALS_DIR}/password` },
    );
  return env;
}

function sidecarContainer(pod: V1Pod, plan: Plan, cfg: SidecarConfig, warnings: string[]): V1Container {
  return {
    name: SIDECAR_NAME,
    image: cfg.image,
    env: sidecarEnv(pod, plan, cfg, warnings),
    resources: cfg.resources,
    volumeMounts: [
      { name: plan.logVolume, mountPath: plan.logDir },
      ...(credentialsSecretOf(plan, cfg)
        ? [{ name: CREDENTIALS_VOLUME, mountPath: CREDENTIALS_DIR, readOnly: true }]
        : []),
    ],
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: SIDECAR_UID,
      runAsGroup: SIDECAR_UID,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    ...(cfg.native ? { restartPolicy: 'Always' } : {}),
  };
}

const setEnv = (env: readonly V1EnvVar[], vars: Readonly<Record<string, string>>): V1EnvVar[] => [
  ...env.filter((e) => !(e.name in vars)),
  ...Object.entries(vars).map(([name, value]) => ({ name, value })),
];

/** The training container: the shared log directory mounted, its command behind the tee. */
function trainingContainer(c: V1Container, pod: V1Pod, plan: Plan, warnings: string[]): V1Container {
  const mounts: V1VolumeMount[] = [...(c.volumeMounts ?? [])];
  if (!mounts.some((m) => m.mountPath === plan.logDir))
    mounts.push({ name: plan.logVolume, mountPath: plan.logDir });
  const withEnv: V1Container = {
    ...c,
    volumeMounts: mounts,
    env: setEnv(c.env ?? [], { OPTIMUS_LOG_PATH: plan.logPath, OPTIMUS_DONE_FILE: doneFileIn(plan.logDir) }),
  };
  const capture = pod.metadata?.annotations?.[ANNOTATION_CAPTURE_OUTPUT];
  if (capture !== undefined && !BOOLEAN_VALUES.includes(capture))
    warnings.push(
      `optimus: ${ANNOTATION_CAPTURE_OUTPUT} "${capture}" is not one of "true", "false"; capturing the output (the default)`,
    );
  if (capture === 'false' || isTeeWrapped(c)) return withEnv;
  const wrapped = wrapWithTee(withEnv);
  if (wrapped) return wrapped;
  warnings.push(
    `optimus: container "${c.name}" has no command, so its output cannot be copied to ${plan.logPath}: ` +
      `set its command, or have the program write that file and set ${ANNOTATION_CAPTURE_OUTPUT}: "false"`,
  );
  return withEnv;
}

function plan(pod: V1Pod, namespace: string): Plan | { kind: 'malformed' | 'unidentified'; warning: string } {
  const labels = pod.metadata?.labels ?? {};
  const annotations = pod.metadata?.annotations ?? {};
  const id = identify(labels, annotations, {
    name: pod.metadata?.name,
    generateName: pod.metadata?.generateName,
    ownerReferences: pod.metadata?.ownerReferences,
  });
  if (!id.ok) return { kind: 'unidentified', warning: `optimus: sidecar not injected: ${id.reason}` };
  const log = logPathOf(annotations);
  if (!log.ok) return { kind: 'malformed', warning: `optimus: sidecar not injected: ${log.why}` };
  const containers = pod.spec?.containers ?? [];
  const chosen = chooseTrainingContainer(containers, annotations);
  if (!chosen.ok) return { kind: 'malformed', warning: `optimus: sidecar not injected: ${chosen.why}` };
  const main = chosen.index;
  const logDir = posix.dirname(log.path);
  const own = containers[main]?.volumeMounts?.find((m) => m.mountPath === logDir)?.name;
  const hidden = own === undefined ? hidesImageFiles(logDir, containers[main]?.workingDir) : null;
  if (hidden)
    return {
      kind: 'malformed',
      warning:
        `optimus: sidecar not injected: ${ANNOTATION_LOG_PATH} "${log.path}" would mount an emptyDir over ${hidden}, ` +
        `hiding the image's files there; use a directory of its own, e.g. ${LOG_PATH} or ${posix.join(logDir, 'optimus', posix.basename(log.path))}`,
    };
  return {
    identity: id.identity,
    namespace,
    logPath: log.path,
    logDir,
    logVolume: own ?? LOG_VOLUME,
    addVolume: own === undefined && !(pod.spec?.volumes ?? []).some((v) => v.name === LOG_VOLUME),
    main,
  };
}

/**
 * Injects the sidecar into `pod` (which is not modified). `namespace` is the request's
 * namespace (a pod being created often has none in its metadata).
 */
export function mutate(pod: V1Pod, namespace: string, cfg: SidecarConfig): MutateOutcome {
  const inject = pod.metadata?.annotations?.[ANNOTATION_INJECT];
  if (inject !== undefined && !BOOLEAN_VALUES.includes(inject))
    return {
      kind: 'malformed',
      warning: `optimus: ${ANNOTATION_INJECT} "${inject}" is not one of "true", "false"; nothing injected (set "true" to inject the sidecar)`,
    };
  if (!wantsInjection(pod)) return { kind: 'not-requested' };
  if ((SYSTEM_NAMESPACES as readonly string[]).includes(namespace))
    return { kind: 'excluded', warning: `optimus: never injects into the system namespace ${namespace}` };
  if (hasSidecar(pod)) return { kind: 'already-injected' };
  const problem = shapeProblem(pod);
  if (problem) return { kind: 'malformed', warning: `optimus: malformed Pod, nothing injected (${problem})` };
  const p = plan(pod, namespace);
  if ('kind' in p) return p;
  const warnings: string[] = [];
  const spec = pod.spec ?? { containers: [] };
  const volumes: V1Volume[] = [...(spec.volumes ?? [])];
  if (p.addVolume) volumes.push({ name: LOG_VOLUME, emptyDir: { sizeLimit: '256Mi' } });
  const secretName = credentialsSecretOf(p, cfg);
  if (secretName && !volumes.some((v) => v.name === CREDENTIALS_VOLUME))
    volumes.push({
      name: CREDENTIALS_VOLUME,
      secret: {
        secretName,
        items: [{ key: 'password', path: 'password' }],
        // Only an OptimusJob's Secret is sure to come (ADR 0038): any other pod must not wait on it.
        ...(credentialsMayNeverCome(pod, cfg) ? { optional: true } : {}),
      },
    });
  const sidecar = sidecarContainer(pod, p, cfg, warnings);
  const containers = spec.containers.map((c, i) =>
    i === p.main ? trainingContainer(c, pod, p, warnings) : c,
  );
  return {
    kind: 'injected',
    warnings,
    pod: {
      ...pod,
      metadata: {
        ...pod.metadata,
        annotations: {
          ...pod.metadata?.annotations,
          [ANNOTATION_INJECTED]: cfg.native ? 'native' : 'classic',
        },
      },
      spec: {
        ...spec,
        volumes,
        // Classic sidecars learn that training ended through the done marker the tee writes.
        containers: cfg.native ? containers : [...containers, sidecar],
        ...(cfg.native ? { initContainers: [...(spec.initContainers ?? []), sidecar] } : {}),
      },
    },
  };
}
