/**
 * Offline validation of built-in objects with `kubernetes-models` (the Kubernetes OpenAPI schemas):
 * wrong types, missing required fields and bad quantities are caught; unknown fields are not.
 */
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Event } from 'kubernetes-models/v1/Event';
import { Node } from 'kubernetes-models/v1/Node';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';

type Validating = new (data: never) => { validate(): void };

const MODELS: Readonly<Record<string, Validating>> = {
  Pod,
  Service,
  Node,
  ConfigMap,
  Secret,
  Event,
  Lease,
  CustomResourceDefinition,
};

/** Returns the schema violations of a built-in object (empty when valid or when the kind has no model here). */
export function validateBuiltin(kind: string, obj: unknown): string[] {
  const Model = MODELS[kind];
  if (!Model) return [];
  try {
    new Model(obj as never).validate();
    return [];
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
}
