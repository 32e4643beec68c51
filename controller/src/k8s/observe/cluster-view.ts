/**
 * The cluster as the policy sees it, from informers on nodes and pods: each schedulable, ready
 * node's allocatable as capacity, and as `reserved` the requests of every pod on it that is not
 * part of an OptimusJob (other workloads, system pods) — our own pods are re-decided each round.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { Resources } from '../../../../shared/src/units';
import type { ServerSnapshot } from '../../scheduling/types';
import { GROUP, KIND } from '../api/names';
import { podRequests as specRequests } from '../rollout/pod-template';
import { addResources, parseResources } from '../api/quantity';

/** True for pods controlled by an OptimusJob. */
export const isOurPod = (pod: V1Pod): boolean =>
  (pod.metadata?.ownerReferences ?? []).some((r) => r.kind === KIND && r.apiVersion.startsWith(`${GROUP}/`));

const isTerminal = (pod: V1Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** What the kube-scheduler reserves for a pod: the one rule of `pod-template.ts` (overhead included). */
export const podRequests = (pod: V1Pod): Resources => specRequests(pod.spec ?? { containers: [] });

const usable = (node: V1Node): boolean =>
  !node.spec?.unschedulable &&
  (node.status?.conditions ?? []).every((c) => c.type !== 'Ready' || c.status === 'True');

/** Pure: nodes + pods → server snapshots (sorted by name). */
export function serversFrom(nodes: readonly V1Node[], pods: readonly V1Pod[]): ServerSnapshot[] {
  const reserved = new Map<string, Resources>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || isTerminal(pod) || isOurPod(pod)) continue;
    reserved.set(node, addResources(reserved.get(node) ?? {}, podRequests(pod)));
  }
  return nodes
    .filter(usable)
    .map((n) => ({
      name: n.metadata?.name ?? '',
      capacity: parseResources(n.status?.allocatable),
      reserved: reserved.get(n.metadata?.name ?? '') ?? {},
      // Matched against the jobs' pod templates (`k8s/node-constraints.ts`).
      ...(n.metadata?.labels ? { labels: n.metadata.labels } : {}),
      ...(n.spec?.taints?.length
        ? {
            taints: n.spec.taints.map((t) => ({
              key: t.key,
              effect: t.effect,
              ...(t.value !== undefined ? { value: t.value } : {}),
            })),
          }
        : {}),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
