/**
 * The OptimusJob CRD and the controller's RBAC rules, loaded from the chart's files: one source
 * for the chart, the controller and the tests.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const CHART_FILES = new URL('../../../charts/optimus/files/', import.meta.url);

/** The CRD manifest text exactly as shipped in the chart. */
export function crdYaml(): string {
  return readFileSync(new URL('optimusjob-crd.yaml', CHART_FILES), 'utf8');
}

export function crdManifest(): Record<string, unknown> {
  return parse(crdYaml()) as Record<string, unknown>;
}

export interface RbacRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/** The rules the controller's ClusterRole grants; tests check every API call is covered. */
export function rbacRules(): RbacRule[] {
  return parse(readFileSync(new URL('rbac-rules.yaml', CHART_FILES), 'utf8')) as RbacRule[];
}

/** True when some rule allows `verb` on `group`/`resource` (resource may be `plural/subresource`). */
export function allowedBy(
  rules: readonly RbacRule[],
  group: string,
  resource: string,
  verb: string,
): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups.includes(group) || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(verb) || r.verbs.includes('*')),
  );
}
