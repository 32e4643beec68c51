/**
 * Validates rendered objects against the Kubernetes OpenAPI schemas (`kubernetes-models`):
 * wrong types, missing required fields, bad quantities. It does not catch unknown fields, so the
 * chart tests also assert the fields that matter by hand.
 *
 * Kinds from CRDs that kubernetes-models does not know (cert-manager, Prometheus Operator) are
 * checked by hand-written shape checks, so every object the chart renders is checked by something.
 */
import { MutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, PersistentVolumeClaim, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { K8sObject } from './render';

interface Validatable {
  validate(): void;
}
type ModelFactory = (obj: K8sObject) => Validatable;

// The models' constructors are typed with each kind's full interface; the rendered YAML is checked
// at run time by validate(), which is the point, so the cast is confined to this table.
const model =
  <T>(Ctor: new (data: T) => Validatable): ModelFactory =>
  (obj) =>
    new Ctor(obj as unknown as T);

const MODELS: Record<string, ModelFactory> = {
  'v1/ConfigMap': model(ConfigMap),
  'v1/PersistentVolumeClaim': model(PersistentVolumeClaim),
  'v1/Pod': model(Pod),
  'v1/Secret': model(Secret),
  'v1/Service': model(Service),
  'v1/ServiceAccount': model(ServiceAccount),
  'apps/v1/Deployment': model(Deployment),
  'policy/v1/PodDisruptionBudget': model(PodDisruptionBudget),
  'networking.k8s.io/v1/NetworkPolicy': model(NetworkPolicy),
  'rbac.authorization.k8s.io/v1/ClusterRole': model(ClusterRole),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': model(ClusterRoleBinding),
  'rbac.authorization.k8s.io/v1/Role': model(Role),
  'rbac.authorization.k8s.io/v1/RoleBinding': model(RoleBinding),
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': model(MutatingWebhookConfiguration),
  'apiextensions.k8s.io/v1/CustomResourceDefinition': model(CustomResourceDefinition),
};

type ShapeCheck = (obj: K8sObject) => string[];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const spec = (obj: K8sObject): Record<string, unknown> => (isRecord(obj['spec']) ? obj['spec'] : {});

function checkIssuer(obj: K8sObject): string[] {
  const s = spec(obj);
  const kinds = ['selfSigned', 'ca', 'acme', 'vault', 'venafi'].filter((k) => k in s);
  const errors =
    kinds.length === 1 ? [] : [`spec must set exactly one issuer type, got [${kinds.join(', ')}]`];
  if ('ca' in s && !(isRecord(s['ca']) && nonEmptyString(s['ca']['secretName']))) {
    errors.push('spec.ca.secretName is required');
  }
  return errors;
}

function checkCertificate(obj: K8sObject): string[] {
  const s = spec(obj);
  const errors: string[] = [];
  if (!nonEmptyString(s['secretName'])) errors.push('spec.secretName is required');
  const ref = s['issuerRef'];
  if (!isRecord(ref) || !nonEmptyString(ref['name'])) errors.push('spec.issuerRef.name is required');
  const dns = s['dnsNames'];
  if (s['isCA'] !== true && !(Array.isArray(dns) && dns.length > 0 && dns.every(nonEmptyString))) {
    errors.push('spec.dnsNames must be a non-empty list of names');
  }
  return errors;
}

function checkServiceMonitor(obj: K8sObject): string[] {
  const s = spec(obj);
  const errors: string[] = [];
  const selector = s['selector'];
  if (!isRecord(selector) || !isRecord(selector['matchLabels']))
    errors.push('spec.selector.matchLabels is required');
  const endpoints = s['endpoints'];
  if (!Array.isArray(endpoints) || endpoints.length === 0) return [...errors, 'spec.endpoints is required'];
  endpoints.forEach((e: unknown, i) => {
    if (!isRecord(e) || !(nonEmptyString(e['port']) || typeof e['targetPort'] !== 'undefined')) {
      errors.push(`spec.endpoints[${i}] needs a port`);
    }
  });
  return errors;
}

const SHAPES: Record<string, ShapeCheck> = {
  'cert-manager.io/v1/Issuer': checkIssuer,
  'cert-manager.io/v1/Certificate': checkCertificate,
  'monitoring.coreos.com/v1/ServiceMonitor': checkServiceMonitor,
};

/** Validates one object; returns the problems found (empty when valid). */
export function validateObject(obj: K8sObject): string[] {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const label = `${key} ${obj.metadata?.name ?? '(unnamed)'}`;
  if (!nonEmptyString(obj.metadata?.name)) return [`${label}: metadata.name is required`];
  const factory = MODELS[key];
  if (factory !== undefined) {
    try {
      factory(obj).validate();
      return [];
    } catch (e) {
      return [`${label}: ${e instanceof Error ? e.message : String(e)}`];
    }
  }
  const shape = SHAPES[key];
  if (shape !== undefined) return shape(obj).map((m) => `${label}: ${m}`);
  return [`${label}: no validator for this kind (add it to test/chart/validate.ts)`];
}

/** Validates every object; returns all problems. */
export function validateAll(objects: readonly K8sObject[]): string[] {
  return objects.flatMap(validateObject);
}
