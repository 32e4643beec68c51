/**
 * Unknown fields of built-in objects, found from the field lists of `@kubernetes/client-node`'s
 * generated models (one per Kubernetes type, e.g. `V1PodSpec.getAttributeTypeMap()`), which are
 * generated from the API server's own OpenAPI document. The real server (field validation `Warn`,
 * the default) drops such fields and answers with a `Warning` header; with `fieldValidation=Strict`
 * (kubectl's default) it refuses the request with 400.
 */
import * as k8s from '@kubernetes/client-node';

interface Attribute {
  readonly baseName: string;
  readonly type: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const MODELS = k8s as unknown as Record<string, Model | undefined>;

/** Model type name of each served built-in kind, keyed by `apiVersion/kind`. */
export const BUILTIN_MODEL: Readonly<Record<string, string>> = {
  'v1/Pod': 'V1Pod',
  'v1/Service': 'V1Service',
  'v1/Node': 'V1Node',
  'v1/ConfigMap': 'V1ConfigMap',
  'v1/Secret': 'V1Secret',
  'v1/Event': 'CoreV1Event',
  'v1/Namespace': 'V1Namespace',
  'apps/v1/Deployment': 'V1Deployment',
  'coordination.k8s.io/v1/Lease': 'V1Lease',
  'events.k8s.io/v1/Event': 'EventsV1Event',
  'apiextensions.k8s.io/v1/CustomResourceDefinition': 'V1CustomResourceDefinition',
  'v1/ServiceAccount': 'V1ServiceAccount',
  'v1/PersistentVolumeClaim': 'V1PersistentVolumeClaim',
  'policy/v1/PodDisruptionBudget': 'V1PodDisruptionBudget',
  'networking.k8s.io/v1/NetworkPolicy': 'V1NetworkPolicy',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'V1ClusterRole',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'V1ClusterRoleBinding',
  'rbac.authorization.k8s.io/v1/Role': 'V1Role',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'V1RoleBinding',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': 'V1MutatingWebhookConfiguration',
};

const ARRAY = /^Array<(.+)>$/;
const MAP = /^\{ \[key: string\]: (.+); \}$/;

function walk(type: string, v: unknown, path: string, dropped: string[]): void {
  const list = ARRAY.exec(type);
  if (list) {
    if (Array.isArray(v)) v.forEach((item, i) => walk(list[1]!, item, `${path}[${i}]`, dropped));
    return;
  }
  const map = MAP.exec(type);
  if (map) {
    if (v && typeof v === 'object' && !Array.isArray(v))
      for (const [k, item] of Object.entries(v)) walk(map[1]!, item, `${path}.${k}`, dropped);
    return;
  }
  const model = MODELS[type];
  if (!model?.getAttributeTypeMap || !v || typeof v !== 'object' || Array.isArray(v)) return;
  const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  const obj = v as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const t = attrs.get(key);
    if (t === undefined) {
      delete obj[key];
      dropped.push(`${path}.${key}`.replace(/^\./, ''));
    } else walk(t, obj[key], `${path}.${key}`, dropped);
  }
}

/** Removes unknown fields from `obj` in place; returns their paths (empty when the kind is not modelled). */
export function pruneBuiltin(key: string, obj: Record<string, unknown>): string[] {
  const type = BUILTIN_MODEL[key];
  const dropped: string[] = [];
  if (type) walk(type, obj, '', dropped);
  return dropped;
}
