/**
 * Offline validation of built-in objects with `kubernetes-models` (the Kubernetes OpenAPI schemas):
 * wrong types, missing required fields and bad quantities are caught; unknown fields are not.
 * `events.k8s.io/v1` Events also get the API server's own create rules (the schema alone lets an
 * Event without reason or reportingController through; the real server does not).
 */
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Event } from 'kubernetes-models/v1/Event';
import { Node } from 'kubernetes-models/v1/Node';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { Event as EventV1 } from 'kubernetes-models/events.k8s.io/v1/Event';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { MutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { ResourceType } from './resources';
import { apiVersionOf } from './resources';

type Validating = new (data: never) => { validate(): void };

/** Keyed by `apiVersion/kind`: core `v1/Event` and `events.k8s.io/v1/Event` are different schemas. */
const MODELS: Readonly<Record<string, Validating>> = {
  'v1/Pod': Pod,
  'v1/Service': Service,
  'v1/Node': Node,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Event': Event,
  'coordination.k8s.io/v1/Lease': Lease,
  'events.k8s.io/v1/Event': EventV1,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': CustomResourceDefinition,
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': MutatingWebhookConfiguration,
};

/** Returns the schema violations of a built-in object (empty when valid or when the kind has no model here). */
export function validateBuiltin(t: Pick<ResourceType, 'group' | 'version' | 'kind'>, obj: unknown): string[] {
  const key = `${apiVersionOf(t)}/${t.kind}`;
  const Model = MODELS[key];
  if (!Model) return [];
  try {
    new Model(obj as never).validate();
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
  if (key === 'events.k8s.io/v1/Event') return eventRules(obj as EventFields);
  if (key === 'v1/Pod') return podRules(obj as { spec?: PodSpecFields });
  return [];
}

interface ContainerFields {
  readonly name?: string;
  readonly volumeMounts?: readonly { readonly name?: string; readonly mountPath?: string }[];
  readonly ports?: readonly { readonly name?: string }[];
}
interface PodSpecFields {
  readonly volumes?: readonly { readonly name?: string }[];
  readonly containers?: readonly ContainerFields[];
  readonly initContainers?: readonly ContainerFields[];
}

/**
 * The API server's `ValidatePodSpec` rules the schema cannot express: unique volume and container
 * names, every volume mount naming a volume of the pod, unique mount paths within a container and
 * unique port names within a container (messages as the real server words them).
 */
function podRules(pod: { spec?: PodSpecFields }): string[] {
  const errors: string[] = [];
  const spec = pod.spec ?? {};
  const volumes = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const name = v.name ?? '';
    if (volumes.has(name)) errors.push(`spec.volumes[${i}].name: Duplicate value: "${name}"`);
    volumes.add(name);
  });
  const containerNames = new Set<string>();
  for (const [field, list] of [
    ['initContainers', spec.initContainers ?? []],
    ['containers', spec.containers ?? []],
  ] as const)
    list.forEach((c, i) => {
      const at = `spec.${field}[${i}]`;
      const name = c.name ?? '';
      if (containerNames.has(name)) errors.push(`${at}.name: Duplicate value: "${name}"`);
      containerNames.add(name);
      const paths = new Set<string>();
      (c.volumeMounts ?? []).forEach((m, j) => {
        const mount = `${at}.volumeMounts[${j}]`;
        if (!volumes.has(m.name ?? '')) errors.push(`${mount}.name: Not found: "${m.name ?? ''}"`);
        const path = m.mountPath ?? '';
        if (paths.has(path)) errors.push(`${mount}.mountPath: Invalid value: "${path}": must be unique`);
        paths.add(path);
      });
      const ports = new Set<string>();
      (c.ports ?? []).forEach((port, j) => {
        if (port.name === undefined || port.name === '') return;
        if (ports.has(port.name)) errors.push(`${at}.ports[${j}].name: Duplicate value: "${port.name}"`);
        ports.add(port.name);
      });
    });
  return errors;
}

interface EventFields {
  readonly type?: string;
  readonly reason?: string;
  readonly action?: string;
  readonly note?: string;
  readonly reportingController?: string;
  readonly reportingInstance?: string;
  readonly regarding?: { readonly kind?: string; readonly name?: string };
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

/** The API server's `ValidateEventCreate` for events.k8s.io/v1, the parts that matter to a client. */
function eventRules(e: EventFields & { eventTime?: unknown }): string[] {
  const errors: string[] = [];
  const required = (field: keyof EventFields, max: number) => {
    const v = e[field];
    if (typeof v !== 'string' || v === '') errors.push(`${field}: Required value`);
    else if (v.length > max) errors.push(`${field}: Too long: may not be more than ${max} bytes`);
  };
  required('reportingController', 128);
  required('reportingInstance', 128);
  required('action', 128);
  required('reason', 128);
  if (e.type !== 'Normal' && e.type !== 'Warning')
    errors.push(`type: Unsupported value: "${String(e.type)}": supported values: "Normal", "Warning"`);
  if ((e.note ?? '').length > 1024) errors.push('note: Too long: may not be more than 1024 bytes');
  if (typeof e.eventTime !== 'string' || !MICRO_TIME.test(e.eventTime))
    errors.push(`eventTime: Invalid value: "${String(e.eventTime)}": must be RFC 3339 with microseconds`);
  if (!e.regarding?.kind || !e.regarding.name) errors.push('regarding: Required value: kind and name');
  return errors;
}
