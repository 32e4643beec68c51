/**
 * The kube-scheduler's filter plugins that matter to a controller that pins pods, written from
 * the Kubernetes documentation (not from the controller's code, so a bug there shows here):
 * NodeUnschedulable, TaintToleration (NoSchedule/NoExecute), NodeAffinity (nodeSelector AND
 * required node affinity: terms ORed, matchExpressions on labels and matchFields on
 * `metadata.name` ANDed, operators In/NotIn/Exists/DoesNotExist/Gt/Lt) and NodeResourcesFit
 * (the pod's effective requests: containers + native sidecars, the largest init container as a
 * floor, plus overhead — against allocatable minus the requests of the pods already there).
 */
export type Quantities = Record<string, string | number>;

export interface PodSpecLike {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
    };
  };
  containers: { resources?: { requests?: Quantities } }[];
  initContainers?: { restartPolicy?: string; resources?: { requests?: Quantities } }[];
  overhead?: Quantities;
}

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}
interface NodeSelectorTerm {
  matchExpressions?: Requirement[];
  matchFields?: Requirement[];
}

export interface NodeLike {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean; taints?: { key: string; value?: string; effect: string }[] };
  status?: { allocatable?: Quantities };
}

const UNITS: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** A Kubernetes quantity in base units (cores, bytes, devices); NaN when malformed. */
export function quantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+(?:e[0-9]+)?)([a-zA-Z]*)$/.exec(q);
  return m ? Number(m[1]) * (UNITS[m[2] ?? ''] ?? NaN) : NaN;
}

const add = (a: Record<string, number>, b: Quantities | undefined): Record<string, number> => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b ?? {})) out[k] = (out[k] ?? 0) + quantity(v);
  return out;
};
const max = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
};

/** The effective requests of a pod, as the scheduler reserves them. */
export function effectiveRequests(spec: PodSpecLike): Record<string, number> {
  let total: Record<string, number> = {};
  for (const c of spec.containers) total = add(total, c.resources?.requests);
  let sidecars: Record<string, number> = {};
  let init: Record<string, number> = {};
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      total = add(total, c.resources?.requests);
      sidecars = add(sidecars, c.resources?.requests);
      init = max(init, sidecars);
    } else init = max(init, add(sidecars, c.resources?.requests));
  }
  return add(max(total, init), spec.overhead);
}

function requirementHolds(r: Requirement, value: string | undefined): boolean {
  switch (r.operator) {
    case 'In':
      return value !== undefined && (r.values ?? []).includes(value);
    case 'NotIn':
      return value === undefined || !(r.values ?? []).includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return value !== undefined && Number(value) > Number(r.values?.[0]);
    case 'Lt':
      return value !== undefined && Number(value) < Number(r.values?.[0]);
    default:
      return false;
  }
}

const termMatches = (t: NodeSelectorTerm, node: NodeLike): boolean =>
  // An empty term matches no node (the API's rule).
  ((t.matchExpressions?.length ?? 0) > 0 || (t.matchFields?.length ?? 0) > 0) &&
  (t.matchExpressions ?? []).every((r) => requirementHolds(r, node.metadata.labels?.[r.key])) &&
  (t.matchFields ?? []).every((r) =>
    requirementHolds(r, r.key === 'metadata.name' ? node.metadata.name : undefined),
  );

export type FilterFailure =
  | { readonly kind: 'unschedulable' }
  | { readonly kind: 'taint'; readonly taint: string }
  | { readonly kind: 'affinity' }
  | { readonly kind: 'insufficient'; readonly resources: readonly string[] };

/** Why `node` cannot take a pod of `spec` (null when it can); `used` = requests already bound there. */
export function filterNode(
  spec: PodSpecLike,
  node: NodeLike,
  used: Record<string, number>,
): FilterFailure | null {
  if (node.spec?.unschedulable) return { kind: 'unschedulable' };
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    const tolerated = (spec.tolerations ?? []).some(
      (t) =>
        (t.effect === undefined || t.effect === '' || t.effect === taint.effect) &&
        (t.operator === 'Exists'
          ? t.key === undefined || t.key === '' || t.key === taint.key
          : t.key === taint.key && (t.value ?? '') === (taint.value ?? '')),
    );
    if (!tolerated) return { kind: 'taint', taint: `{${taint.key}: ${taint.value ?? ''}}` };
  }
  const selector = Object.entries(spec.nodeSelector ?? {}).every(([k, v]) => node.metadata.labels?.[k] === v);
  const terms =
    spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!selector || (terms !== undefined && !terms.some((t) => termMatches(t, node))))
    return { kind: 'affinity' };
  const alloc = node.status?.allocatable ?? {};
  const short = Object.entries(effectiveRequests(spec))
    .filter(([r, q]) => q > 0 && (used[r] ?? 0) + q > quantity(alloc[r] ?? 0) + 1e-9)
    .map(([r]) => r);
  return short.length ? { kind: 'insufficient', resources: short } : null;
}

/** The scheduler's event message: `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match …`. */
export function unschedulableMessage(total: number, failures: readonly FilterFailure[]): string {
  const counts = new Map<string, number>();
  const bump = (reason: string) => counts.set(reason, (counts.get(reason) ?? 0) + 1);
  for (const f of failures) {
    if (f.kind === 'unschedulable') bump('node(s) were unschedulable');
    else if (f.kind === 'taint') bump(`node(s) had untolerated taint ${f.taint}`);
    else if (f.kind === 'affinity') bump("node(s) didn't match Pod's node affinity/selector");
    else for (const r of f.resources) bump(`Insufficient ${r}`);
  }
  const reasons = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  return `0/${total} nodes are available: ${reasons.join(', ')}.`;
}
