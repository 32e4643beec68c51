/** What the webhook injects: the sidecar's image, resources, broker and credentials. */
import type { V1ResourceRequirements } from '@kubernetes/client-node';

export interface SidecarConfig {
  readonly image: string;
  readonly resources: V1ResourceRequirements;
  readonly brokerUrl: string;
  /** Secret with keys `username` and `password`; omitted → no credentials injected. */
  readonly credentialsSecret?: string;
  /**
   * Per-job broker identities (ADR 0013): the job's own Secret `<job>-optimus-broker` (key `password`),
   * and the sidecar logs in as its task (user name = client id); `credentialsSecret` is then unused.
   */
  readonly perJobCredentials?: boolean;
  /** Native sidecar (init container, `restartPolicy: Always`, Kubernetes ≥ 1.29) or classic. */
  readonly native: boolean;
}

export const DEFAULT_SIDECAR_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '10m', memory: '48Mi' },
  limits: { memory: '96Mi' },
};

/** Native sidecars are on by default from Kubernetes 1.29 (`SidecarContainers` beta). */
export function supportsNativeSidecars(gitVersion: string): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(gitVersion);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 1 || (major === 1 && minor >= 29);
}

/** The sidecar image's non-root user (distroless `nonroot`). */
export const SIDECAR_UID = 65532;
export const CREDENTIALS_VOLUME = 'optimus-broker-credentials' as const;
export const CREDENTIALS_DIR = '/etc/optimus/broker' as const;
