/**
 * Plays the kube-scheduler and the kubelets against the double's store (in process), because
 * the double itself does not schedule.
 *
 * Scheduler: a pod without `spec.nodeName` is bound to the first node (by name) that passes the
 * filters of `scheduling-filters.ts` (taints, node selector and required node affinity, resource
 * fit against the pods already bound); otherwise it stays `Pending` with
 * `PodScheduled=False/Unschedulable` and the scheduler's message, and is tried again whenever a
 * pod goes away or a node changes. A pod created with `spec.nodeName` skips the scheduler; the
 * kubelet fails it (`OutOfcpu`…) when it does not fit.
 *
 * Kubelet: a bound pod runs after `startDelayMs` (images matching `badImage` stay in
 * `ErrImagePull`; pods matching `neverStart` stay Pending, as under a stuck kubelet). A
 * terminating pod gets its "SIGTERM" (`onTerminate`), stops after `stopDelayMs(pod)` — but never
 * later than its `deletionGracePeriodSeconds` (the SIGKILL) — and is then removed. A pod that never
 * ran is removed at once.
 */
import type { ApiOperations } from './operations';
import type { ResourceType } from './resources';
import type { FilterFailure, NodeLike, PodSpecLike } from './scheduling-filters';
import { effectiveRequests, filterNode, unschedulableMessage } from './scheduling-filters';
import type { K8sObject, StoredEvent } from './store';
import { StoreError } from './store';

export { quantity } from './scheduling-filters';

export interface FakeClusterOptions {
  readonly startDelayMs?: number;
  /** How long a pod takes to stop after SIGTERM when `stopDelayMs` does not say (default 5 ms). */
  readonly terminateDelayMs?: number;
  /** How long this pod's program takes to stop after SIGTERM; capped by its grace period. */
  readonly stopDelayMs?: (pod: K8sObject) => number;
  readonly badImage?: (image: string) => boolean;
  /** Called when a running pod is asked to terminate (the SIGTERM moment). */
  readonly onTerminate?: (pod: K8sObject) => void;
  /** Called when a pod is killed at the end of its grace period without having stopped. */
  readonly onKill?: (pod: K8sObject) => void;
  /** Pods the kubelet never starts (bound, Pending for ever: a stuck kubelet or image pull). */
  readonly neverStart?: (pod: K8sObject) => boolean;
}

export interface NodeOptions {
  readonly labels?: Record<string, string>;
  readonly taints?: {
    key: string;
    value?: string;
    effect: 'NoSchedule' | 'NoExecute' | 'PreferNoSchedule';
  }[];
  readonly unschedulable?: boolean;
}

type Pod = K8sObject & {
  spec: Omit<PodSpecLike, 'containers'> & {
    containers: { name: string; image: string; resources?: { requests?: Record<string, string | number> } }[];
  };
  status?: { phase?: string; conditions?: { type: string; message?: string }[] };
};

const POD = (api: ApiOperations) => api.resolve('', 'v1', 'pods') as ResourceType;
const NODE = (api: ApiOperations) => api.resolve('', 'v1', 'nodes') as ResourceType;
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const finished = (p: Pod) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? '');

export class FakeCluster {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopping = new Set<string>();
  /** Pods (by uid) a kubelet has taken: bound by the scheduler or admitted with `spec.nodeName`. */
  private readonly taken = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly api: ApiOperations,
    private readonly opts: FakeClusterOptions = {},
  ) {
    this.unsubscribe = api.store.subscribe((e) => this.later(0, () => this.react(e)));
  }

  addNode(name: string, allocatable: Record<string, string>, o: NodeOptions = {}): void {
    this.api.create(NODE(this.api), undefined, {
      metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
      spec: {
        ...(o.taints ? { taints: o.taints } : {}),
        ...(o.unschedulable ? { unschedulable: true } : {}),
      },
      status: { allocatable, capacity: allocatable },
    });
  }

  /** The pod's containers exit: 0 → Succeeded, otherwise Failed. */
  exit(namespace: string, name: string, code: number): void {
    this.setStatus(namespace, name, {
      phase: code === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        {
          name: 'main',
          ready: false,
          restartCount: 0,
          image: 'x',
          imageID: '',
          state: { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error' } },
        },
      ],
    });
  }

  pods(namespace?: string): Pod[] {
    return this.api.store.list(POD(this.api), namespace) as Pod[];
  }

  close(): void {
    this.unsubscribe();
    for (const t of this.timers) clearTimeout(t);
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      try {
        fn();
      } catch (err) {
        if (!(err instanceof StoreError)) throw err; // the pod went away meanwhile
      }
    }, ms);
    this.timers.add(t);
  }

  private react(e: StoredEvent): void {
    if (e.typeKey === '/nodes' || (e.typeKey === '/pods' && e.type === 'DELETED')) return this.retryPending();
    if (e.typeKey !== '/pods') return;
    const pod = e.object as Pod;
    const current = this.api.store.get(POD(this.api), pod.metadata.namespace, pod.metadata.name) as
      Pod | undefined;
    if (!current || current.metadata.resourceVersion !== pod.metadata.resourceVersion) return; // stale event
    if (current.metadata.deletionTimestamp !== undefined) return this.terminate(current);
    if (current.status?.phase === undefined && !this.taken.has(current.metadata.uid ?? ''))
      this.schedule(current);
  }

  /** The scheduler's retry queue: pending pods get another chance when the cluster changed. */
  private retryPending(): void {
    for (const p of this.pods())
      if (p.spec.nodeName === undefined && p.status?.phase === 'Pending' && !p.metadata.deletionTimestamp)
        this.schedule(p);
  }

  private terminate(pod: Pod): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}/${pod.metadata.uid}`;
    if (this.stopping.has(key)) return;
    this.stopping.add(key);
    const remove = () => {
      this.stopping.delete(key);
      this.taken.delete(pod.metadata.uid ?? '');
      this.api.store.remove(POD(this.api), pod.metadata.namespace, pod.metadata.name);
    };
    if (pod.status?.phase !== 'Running') return this.later(0, remove);
    this.opts.onTerminate?.(pod);
    const graceMs = Number(pod.metadata['deletionGracePeriodSeconds'] ?? 30) * 1000;
    const stopMs = this.opts.stopDelayMs?.(pod) ?? this.opts.terminateDelayMs ?? 5;
    if (stopMs > graceMs) this.later(graceMs, () => (this.opts.onKill?.(pod), remove()));
    else this.later(stopMs, remove);
  }

  private usedOn(node: string): Record<string, number> {
    let used: Record<string, number> = {};
    for (const p of this.pods())
      if (p.spec.nodeName === node && !finished(p))
        for (const [r, q] of Object.entries(effectiveRequests(p.spec)))
          used = { ...used, [r]: (used[r] ?? 0) + q };
    return used;
  }

  private schedule(pod: Pod): void {
    const nodes = (this.api.store.list(NODE(this.api)) as unknown as NodeLike[]).sort((a, b) =>
      a.metadata.name.localeCompare(b.metadata.name),
    );
    if (pod.spec.nodeName !== undefined) return this.admitBound(pod, nodes);
    const failures: FilterFailure[] = [];
    for (const node of nodes) {
      const f = filterNode(pod.spec, node, this.usedOn(node.metadata.name));
      if (f === null) return this.bind(pod, node.metadata.name);
      failures.push(f);
    }
    const message = unschedulableMessage(nodes.length, failures);
    if (pod.status?.conditions?.[0]?.message === message) return; // nothing new to say
    this.setStatus(pod.metadata.namespace ?? '', pod.metadata.name, {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message,
          lastTransitionTime: now(),
        },
      ],
    });
  }

  /** A pod created with `spec.nodeName`: the kubelet of that node admits it or fails it. */
  private admitBound(pod: Pod, nodes: readonly NodeLike[]): void {
    this.taken.add(pod.metadata.uid ?? '');
    const node = nodes.find((n) => n.metadata.name === pod.spec.nodeName);
    const others = this.usedOn(pod.spec.nodeName ?? '');
    const mine = effectiveRequests(pod.spec);
    for (const [r, q] of Object.entries(mine)) others[r] = (others[r] ?? 0) - q; // itself is counted
    const f = node ? filterNode({ containers: pod.spec.containers }, node, others) : null;
    if (node && f?.kind === 'insufficient')
      return this.setStatus(pod.metadata.namespace ?? '', pod.metadata.name, {
        phase: 'Failed',
        reason: `OutOf${f.resources[0]}`,
        message: `Pod was rejected: Node didn't have enough resource: ${f.resources[0]}`,
      });
    this.later(this.opts.startDelayMs ?? 5, () => this.start(pod));
  }

  private bind(pod: Pod, node: string): void {
    this.taken.add(pod.metadata.uid ?? '');
    const bound = { ...pod, spec: { ...pod.spec, nodeName: node } };
    this.api.store.update(POD(this.api), bound, { bumpGeneration: false });
    this.later(this.opts.startDelayMs ?? 5, () => this.start(pod));
  }

  private start(pod: Pod): void {
    if (this.opts.neverStart?.(pod)) return;
    const bad = pod.spec.containers.find((c) => this.opts.badImage?.(c.image));
    this.setStatus(pod.metadata.namespace ?? '', pod.metadata.name, {
      phase: bad ? 'Pending' : 'Running',
      startTime: now(),
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: now() }],
      containerStatuses: pod.spec.containers.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: !bad,
        restartCount: 0,
        state:
          bad && c === bad
            ? { waiting: { reason: 'ErrImagePull', message: `failed to pull image "${c.image}"` } }
            : { running: { startedAt: now() } },
      })),
    });
  }

  private setStatus(namespace: string, name: string, status: Record<string, unknown>): void {
    const pod = this.api.store.get(POD(this.api), namespace, name);
    if (!pod || pod.metadata.deletionTimestamp !== undefined) return;
    this.api.store.update(POD(this.api), { ...pod, status }, { bumpGeneration: false });
  }
}
