/**
 * Which container of an opted-in pod trains (ADR 0038): the one `optimus.dev/container` (or
 * `kubectl.kubernetes.io/default-container`) names; else a Kubeflow framework container
 * (`pytorch`, `tensorflow`…); else the first container that is not a known mesh, proxy, logging
 * or secrets sidecar. A mesh injector that ran first puts `istio-proxy` at the front: taking "the
 * first container" would tee the proxy's output and mount the log there.
 */
import type { V1Container } from '@kubernetes/client-node';
import { ANNOTATION_CONTAINER, ANNOTATION_DEFAULT_CONTAINER, KUBEFLOW_CONTAINER_NAMES } from '../api/names';

/** Names (exact, or a prefix followed by `-`) of sidecars that never run training. */
export const KNOWN_SIDECARS: readonly string[] = [
  'istio-proxy',
  'istio-validation',
  'linkerd-proxy',
  'linkerd-init',
  'envoy',
  'envoy-sidecar',
  'consul-dataplane',
  'consul-connect-envoy-sidecar',
  'kuma-sidecar',
  'fluent-bit',
  'fluentbit',
  'fluentd',
  'vector',
  'filebeat',
  'promtail',
  'otel-collector',
  'opentelemetry-collector',
  'datadog-agent',
  'vault-agent',
  'vault-agent-init',
  'cloud-sql-proxy',
  'cloudsql-proxy',
  'oauth2-proxy',
  'gke-gcsfuse-sidecar',
  'aws-otel-collector',
];

export const isKnownSidecar = (name: string): boolean =>
  KNOWN_SIDECARS.some((s) => name === s || name.startsWith(`${s}-`));

export type Chosen =
  { readonly ok: true; readonly index: number } | { readonly ok: false; readonly why: string };

export function chooseTrainingContainer(
  containers: readonly Pick<V1Container, 'name'>[],
  annotations: Readonly<Record<string, string>>,
): Chosen {
  const wanted = annotations[ANNOTATION_CONTAINER] ?? annotations[ANNOTATION_DEFAULT_CONTAINER];
  if (wanted !== undefined) {
    const i = containers.findIndex((c) => c.name === wanted);
    return i >= 0 ? { ok: true, index: i } : { ok: false, why: `no container is named "${wanted}"` };
  }
  const kubeflow = containers.findIndex((c) =>
    (KUBEFLOW_CONTAINER_NAMES as readonly string[]).includes(c.name),
  );
  if (kubeflow >= 0) return { ok: true, index: kubeflow };
  const first = containers.findIndex((c) => !isKnownSidecar(c.name));
  if (first >= 0) return { ok: true, index: first };
  return {
    ok: false,
    why: `every container is a known sidecar (${containers.map((c) => c.name).join(', ')}): set ${ANNOTATION_CONTAINER}`,
  };
}
