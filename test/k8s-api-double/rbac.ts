/**
 * RBAC as the API server's authorizer applies it, for the double: a request is allowed when a
 * ClusterRoleBinding, or a RoleBinding in the request's namespace, binds its user's service account
 * to a role with a matching rule (API group, resource with subresource, verb, resource name). The
 * roles and bindings are the objects stored in the double itself — a test applies the chart's
 * rendered RBAC and the controller then gets `403 Forbidden` wherever a real cluster would refuse it.
 * Only users named in `serviceAccounts` are checked; every other token is a cluster admin (the test).
 */
import type { ApiOperations } from './operations';
import type { K8sObject } from './store';

export interface AuthorizationRequest {
  readonly user: string;
  readonly group: string;
  /** `plural` or `plural/subresource`. */
  readonly resource: string;
  readonly verb: string;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

interface Rule {
  readonly apiGroups?: string[];
  readonly resources?: string[];
  readonly resourceNames?: string[];
  readonly verbs?: string[];
}
interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}
interface Binding extends K8sObject {
  readonly roleRef?: { readonly kind: string; readonly name: string };
  readonly subjects?: Subject[];
}

const has = (list: readonly string[] | undefined, v: string): boolean =>
  (list ?? []).includes('*') || (list ?? []).includes(v);

/** Whether one rule allows the request (resourceNames only ever narrow get/update/patch/delete). */
function ruleAllows(r: Rule, a: AuthorizationRequest): boolean {
  if (!has(r.apiGroups, a.group) || !has(r.verbs, a.verb) || !has(r.resources, a.resource)) return false;
  if (!r.resourceNames?.length) return true;
  return a.name !== undefined && r.resourceNames.includes(a.name);
}

export function rbacAuthorizer(
  api: ApiOperations,
  /** token → service account (`namespace/name`) */
  serviceAccounts: ReadonlyMap<string, string>,
): (a: AuthorizationRequest) => boolean {
  const type = (plural: string) => api.resolve('rbac.authorization.k8s.io', 'v1', plural)!;
  const rulesOf = (kind: string, name: string, ns: string | undefined): Rule[] => {
    const role =
      kind === 'ClusterRole'
        ? api.store.get(type('clusterroles'), undefined, name)
        : ns === undefined
          ? undefined
          : api.store.get(type('roles'), ns, name);
    return ((role as { rules?: Rule[] } | undefined)?.rules ?? []);
  };
  return (a) => {
    const sa = serviceAccounts.get(a.user);
    if (sa === undefined) return true;
    const [saNs, saName] = sa.split('/');
    const binds = (b: Binding) =>
      (b.subjects ?? []).some(
        (s) => s.kind === 'ServiceAccount' && s.name === saName && s.namespace === saNs,
      );
    const allowedBy = (b: Binding, ns: string | undefined) =>
      b.roleRef !== undefined &&
      binds(b) &&
      rulesOf(b.roleRef.kind, b.roleRef.name, ns).some((r) => ruleAllows(r, a));
    const cluster = api.store.list(type('clusterrolebindings')) as Binding[];
    if (cluster.some((b) => allowedBy(b, undefined))) return true;
    if (a.namespace === undefined) return false;
    return (api.store.list(type('rolebindings'), a.namespace) as Binding[]).some((b) =>
      allowedBy(b, a.namespace),
    );
  };
}

/** The API server's message for a refused request. */
export function forbiddenMessage(a: AuthorizationRequest, serviceAccount: string): string {
  const [ns, name] = serviceAccount.split('/');
  const [resource, sub] = a.resource.split('/');
  return (
    `${resource}${a.name ? ` "${a.name}"` : ''} is forbidden: User "system:serviceaccount:${ns}:${name}" cannot ` +
    `${a.verb} resource "${resource}"${sub ? ` with subresource "${sub}"` : ''} in API group "${a.group}"` +
    (a.namespace !== undefined ? ` in the namespace "${a.namespace}"` : ' at the cluster scope')
  );
}
