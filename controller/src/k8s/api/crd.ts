/**
 * The OptimusJob CRD and the controller's RBAC rules, loaded from the chart's files: one source
 * for the chart, the controller and the tests.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * Set by `controller/build.mjs` (esbuild `define`): the bundle carries the chart files, so the
 * image needs no chart directory. Undefined when running from the sources.
 */
declare const __OPTIMUS_CHART_FILES__: Readonly<Record<string, string>> | undefined;

/** A file of `charts/optimus/files/`: embedded in the bundle, read from the chart otherwise. */
function chartFile(name: string): string {
  if (typeof __OPTIMUS_CHART_FILES__ !== 'undefined') {
    const text = __OPTIMUS_CHART_FILES__[name];
    if (text === undefined) throw new Error(`the bundle does not carry charts/optimus/files/${name}`);
    return text;
  }
  return readFileSync(new URL(`../../../../charts/optimus/files/${name}`, import.meta.url), 'utf8');
}

/** The CRD manifest text exactly as shipped in the chart. */
export function crdYaml(): string {
  return chartFile('optimusjob-crd.yaml');
}

export function crdManifest(): Record<string, unknown> {
  return parse(crdYaml()) as Record<string, unknown>;
}

export interface RbacRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
  /** Granted only when the chart sets a jobNamespaceSelector (not part of the rendered rule). */
  readonly selectorOnly?: boolean;
}

/** Where a set of rules applies (see the comment at the top of `rbac-rules.yaml`). */
export interface RbacRuleSets {
  readonly cluster: readonly RbacRule[];
  readonly jobNamespaces: readonly RbacRule[];
  readonly home: readonly RbacRule[];
  /** With the bundled broker only: each job's own broker Secret (ADR 0013). */
  readonly perJobCredentials: readonly RbacRule[];
}

/** The rules by where the chart grants them. */
export function rbacRuleSets(): RbacRuleSets {
  return parse(chartFile('rbac-rules.yaml')) as RbacRuleSets;
}

/** Every rule the controller is granted (all sets); tests check every API call is covered. */
export function rbacRules(): RbacRule[] {
  const s = rbacRuleSets();
  return [...s.cluster, ...s.jobNamespaces, ...s.home, ...s.perJobCredentials];
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
