/**
 * The webhook's pure core: `mutate(pod) → pod`. A pod annotated `optimus.dev/inject: "true"`
 * gets the sidecar (native or classic), the shared log emptyDir mounted into every container,
 * and the sidecar's environment from the pod's labels and annotations. Idempotent: a pod that
 * already has the sidecar comes back unchanged.
 */
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';
import {
  ANNOTATION_BATCH_SIZE,
  ANNOTATION_INJECT,
  ANNOTATION_INJECTED,
  ANNOTATION_LOG_FORMAT,
  LABEL_INDEX,
  LABEL_JOB,
  LABEL_ROLE,
  LOG_DIR,
  LOG_PATH,
  LOG_VOLUME,
  SIDECAR_NAME,
} from '../names';
import { jobBrokerSecretName } from '../broker-credentials';
import type { SidecarConfig } from './sidecar-config';
import { CREDENTIALS_DIR, CREDENTIALS_VOLUME, SIDECAR_DONE_FILE, SIDECAR_STATE_DIR } from './sidecar-config';

export type MutateOutcome =
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'unchanged'; readonly reason: string }
  | { readonly kind: 'mutated'; readonly pod: V1Pod };

export const wantsInjection = (pod: V1Pod): boolean =>
  pod.metadata?.annotations?.[ANNOTATION_INJECT] === 'true';

const hasSidecar = (pod: V1Pod): boolean =>
  [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].some((c) => c.name === SIDECAR_NAME);

/** The Secret the sidecar's broker password comes from, if any. */
function credentialsSecretOf(pod: V1Pod, cfg: SidecarConfig): string | undefined {
  if (cfg.perJobCredentials) return jobBrokerSecretName(pod.metadata?.labels?.[LABEL_JOB] ?? '');
  return cfg.credentialsSecret;
}

function sidecarEnv(pod: V1Pod, namespace: string, cfg: SidecarConfig): V1EnvVar[] {
  const labels = pod.metadata?.labels ?? {};
  const ann = pod.metadata?.annotations ?? {};
  const env: V1EnvVar[] = [
    { name: 'OPTIMUS_NAMESPACE', value: namespace },
    { name: 'OPTIMUS_JOB', value: labels[LABEL_JOB] ?? '' },
    { name: 'OPTIMUS_ROLE', value: labels[LABEL_ROLE] ?? 'worker' },
    { name: 'OPTIMUS_INDEX', value: labels[LABEL_INDEX] ?? '0' },
    { name: 'OPTIMUS_BROKER_URL', value: cfg.brokerUrl },
    { name: 'OPTIMUS_LOG_PATH', value: LOG_PATH },
    { name: 'OPTIMUS_STATE_DIR', value: SIDECAR_STATE_DIR },
    { name: 'OPTIMUS_DONE_FILE', value: SIDECAR_DONE_FILE },
  ];
  if (ann[ANNOTATION_BATCH_SIZE]) env.push({ name: 'OPTIMUS_BATCH_SIZE', value: ann[ANNOTATION_BATCH_SIZE] });
  if (ann[ANNOTATION_LOG_FORMAT]) env.push({ name: 'OPTIMUS_LOG_FORMAT', value: ann[ANNOTATION_LOG_FORMAT] });
  // Per-job identities: the sidecar's user name is its task's client id (it derives it itself).
  if (cfg.perJobCredentials)
    env.push({ name: 'OPTIMUS_BROKER_PASSWORD_FILE', value: `${CREDENTIALS_DIR}/password` });
  else if (cfg.credentialsSecret) {
    env.push(
      {
        name: 'OPTIMUS_BROKER_USERNAME',
        valueFrom: { secretKeyRef: { name: cfg.credentialsSecret, key: 'username' } },
      },
      { name: 'OPTIMUS_BROKER_PASSWORD_FILE', value: `${CREDENTIALS_DIR}/password` },
    );
  }
  return env;
}

function sidecarContainer(pod: V1Pod, namespace: string, cfg: SidecarConfig): V1Container {
  return {
    name: SIDECAR_NAME,
    image: cfg.image,
    env: sidecarEnv(pod, namespace, cfg),
    resources: cfg.resources,
    volumeMounts: [
      { name: LOG_VOLUME, mountPath: LOG_DIR },
      ...(credentialsSecretOf(pod, cfg)
        ? [{ name: CREDENTIALS_VOLUME, mountPath: CREDENTIALS_DIR, readOnly: true }]
        : []),
    ],
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
    ...(cfg.native ? { restartPolicy: 'Always' } : {}),
  };
}

const withLogMount = (c: V1Container): V1Container =>
  (c.volumeMounts ?? []).some((m) => m.name === LOG_VOLUME)
    ? c
    : { ...c, volumeMounts: [...(c.volumeMounts ?? []), { name: LOG_VOLUME, mountPath: LOG_DIR }] };

/**
 * Injects the sidecar into `pod` (which is not modified). `namespace` is the request's
 * namespace (a pod being created often has none in its metadata).
 */
export function mutate(pod: V1Pod, namespace: string, cfg: SidecarConfig): MutateOutcome {
  if (!wantsInjection(pod)) return { kind: 'skipped', reason: `no ${ANNOTATION_INJECT}: "true" annotation` };
  if (hasSidecar(pod)) return { kind: 'unchanged', reason: 'sidecar already injected' };
  if (!pod.metadata?.labels?.[LABEL_JOB])
    return { kind: 'skipped', reason: `label ${LABEL_JOB} missing: the sidecar would not know its job` };
  const spec = pod.spec ?? { containers: [] };
  const volumes = [...(spec.volumes ?? [])];
  if (!volumes.some((v) => v.name === LOG_VOLUME))
    volumes.push({ name: LOG_VOLUME, emptyDir: { sizeLimit: '256Mi' } });
  const secretName = credentialsSecretOf(pod, cfg);
  if (secretName && !volumes.some((v) => v.name === CREDENTIALS_VOLUME))
    volumes.push({
      name: CREDENTIALS_VOLUME,
      secret: { secretName, items: [{ key: 'password', path: 'password' }] },
    });
  const sidecar = sidecarContainer(pod, namespace, cfg);
  const containers = spec.containers.map(withLogMount);
  return {
    kind: 'mutated',
    pod: {
      ...pod,
      metadata: {
        ...pod.metadata,
        annotations: {
          ...pod.metadata.annotations,
          [ANNOTATION_INJECTED]: cfg.native ? 'native' : 'classic',
        },
      },
      spec: {
        ...spec,
        volumes,
        containers: cfg.native ? containers : [...containers, sidecar],
        ...(cfg.native ? { initContainers: [...(spec.initContainers ?? []), sidecar] } : {}),
        // Classic sidecars learn that training ended through the shared volume (OPTIMUS_DONE_FILE).
      },
    },
  };
}
