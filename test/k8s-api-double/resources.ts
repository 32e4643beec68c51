/** The resource types the double serves, keyed like the API server's discovery. */
export interface ResourceType {
  readonly group: string; // '' for core
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Subresources served (only `status` is supported). */
  readonly status: boolean;
  /** OpenAPI schema of a custom resource (from its CRD), validated on write. */
  readonly crdSchema?: unknown;
}

export const BUILTIN_TYPES: readonly ResourceType[] = [
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, status: true },
  { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true, status: true },
  { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, status: true },
  { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true, status: false },
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true, status: false },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true, status: false },
  { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', namespaced: true, status: false },
  { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, status: true },
  { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true, status: true },
  {
    group: '',
    version: 'v1',
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    status: false,
  },
  {
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    status: true,
  },
  {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    status: true,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
    status: false,
  },
  ...(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'] as const).map((kind) => ({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: `${kind.toLowerCase()}s`,
    kind,
    namespaced: !kind.startsWith('Cluster'),
    status: false,
  })),
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
    status: false,
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    namespaced: true,
    status: false,
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    status: true,
  },
];

export const apiVersionOf = (t: Pick<ResourceType, 'group' | 'version'>): string =>
  t.group === '' ? t.version : `${t.group}/${t.version}`;

/** Resource types a CRD object registers (served versions only). */
export function typesFromCrd(crd: Record<string, unknown>): ResourceType[] {
  const spec = crd['spec'] as {
    group: string;
    scope: string;
    names: { plural: string; kind: string };
    versions: {
      name: string;
      served: boolean;
      subresources?: { status?: unknown };
      schema?: { openAPIV3Schema?: unknown };
    }[];
  };
  return spec.versions
    .filter((v) => v.served)
    .map((v) => ({
      group: spec.group,
      version: v.name,
      plural: spec.names.plural,
      kind: spec.names.kind,
      namespaced: spec.scope === 'Namespaced',
      status: v.subresources?.status !== undefined,
      crdSchema: v.schema?.openAPIV3Schema,
    }));
}
