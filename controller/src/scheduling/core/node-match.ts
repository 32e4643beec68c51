/**
 * Does a server admit a task? The rules kube-scheduler's NodeAffinity and TaintToleration filters
 * apply to a pod (Kubernetes docs, "Assigning Pods to Nodes", "Taints and Tolerations"), so that
 * the policy never pins a task where the real scheduler would leave it Pending. Pure.
 */
import type { NodeConstraint, NodeRequirement, NodeSelectorTerm, ServerSnapshot, Taint } from '../types';

/** True when `server` satisfies every constraint in `all` (an empty list admits every server). */
export function admitsAll(all: readonly NodeConstraint[] | undefined, server: ServerSnapshot): boolean {
  return (all ?? []).every((c) => admits(c, server));
}

/** True when `server` satisfies `c`: selector labels, one affinity term, every hard taint tolerated. */
export function admits(c: NodeConstraint, server: ServerSnapshot): boolean {
  const labels = server.labels ?? {};
  for (const [k, v] of Object.entries(c.nodeSelector ?? {})) if (labels[k] !== v) return false;
  if (c.terms !== undefined && !c.terms.some((t) => termHolds(t, server))) return false;
  return (server.taints ?? []).every((t) => !repels(t) || tolerated(t, c));
}

/** PreferNoSchedule only steers the scheduler; NoSchedule and NoExecute keep a pod off. */
const repels = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

function tolerated(taint: Taint, c: NodeConstraint): boolean {
  return (c.tolerations ?? []).some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    // Exists with no key tolerates every taint; Equal (the default) needs key and value equal.
    if (t.operator === 'Exists') return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

/** A term with no requirement matches nothing (the API's rule for an empty nodeSelectorTerm). */
function termHolds(t: NodeSelectorTerm, server: ServerSnapshot): boolean {
  const expressions = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = server.labels ?? {};
  return (
    expressions.every((r) => holds(r, labels[r.key])) &&
    fields.every((r) => holds(r, r.key === 'metadata.name' ? server.name : undefined))
  );
}

function holds(r: NodeRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      // Both sides must be integers; anything else never matches (as in the scheduler).
      const a = integer(value);
      const b = integer(values[0]);
      if (a === null || b === null) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

function integer(s: string | undefined): number | null {
  if (s === undefined || !/^-?\d+$/.test(s)) return null;
  return Number(s);
}
