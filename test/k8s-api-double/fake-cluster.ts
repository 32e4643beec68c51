/**
 * Plays the kube-scheduler and the kubelets against the double's store (in process), because
 * the double itself does not schedule. Binding honours `spec.nodeName` or a required node
 * affinity on `metadata.name`, and checks that the pod's requests fit the node's allocatable
 * minus the requests of the pods already bound there; a pod that does not fit, or targets a
 * node that does not exist, gets `PodScheduled=False/Unschedulable`. Images matching
 * `badImage` get `ErrImagePull`; pods matching `neverStart` stay Pending. A terminating pod gets "SIGTERM" (`onTerminate`) and is
 * removed after `terminateDelayMs`.
 */
import type { ApiOperations } from './operations';
import type { ResourceType } from './resources';
import type { K8sObject, StoredEvent } from './store';
import { StoreError } from './store';

export interface FakeClusterOptions {
  readonly startDelayMs?: number;
  readonly terminateDelayMs?: number;
  readonly badImage?: (image: string) => boolean;
  /** Called when a running pod is asked to terminate (the SIGTERM moment). */
  readonly onTerminate?: (pod: K8sObject) => void;
  /** Pods the kubelet never starts (bound, Pending for ever: a stuck kubelet or image pull). */
  readonly neverStart?: (pod: K8sObject) => boolean;
}

type Pod = K8sObject & {
  spec: {
    nodeName?: string;
    containers: { name: string; image: string; resources?: { requests?: Record<string, string | number> } }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms: { matchFields?: { key: string; values: string[] }[] }[];
        };
      };
    };
  };
  status?: { phase?: string };
};

const POD = (api: ApiOperations) => api.resolve('', 'v1', 'pods') as ResourceType;
const NODE = (api: ApiOperations) => api.resolve('', 'v1', 'nodes') as ResourceType;

/** Parses a Kubernetes quantity into base units (cores, bytes, devices). */
export function quantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q);
  if (!m) return NaN;
  const units: Record<string, number> = {
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
  return Number(m[1]) * (units[m[2] ?? ''] ?? NaN);
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export class FakeCluster {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly api: ApiOperations,
    private readonly opts: FakeClusterOptions = {},
  ) {
    this.unsubscribe = api.store.subscribe((e) => this.later(0, () => this.react(e)));
  }

  addNode(name: string, allocatable: Record<string, string>): void {
    this.api.create(NODE(this.api), undefined, {
      metadata: { name, labels: { 'kubernetes.io/hostname': name } },
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
    if (e.typeKey !== '/pods' || e.type === 'DELETED') return;
    const pod = e.object as Pod;
    const current = this.api.store.get(POD(this.api), pod.metadata.namespace, pod.metadata.name) as
      Pod | undefined;
    if (!current || current.metadata.resourceVersion !== pod.metadata.resourceVersion) return; // stale event
    if (current.metadata.deletionTimestamp !== undefined) return this.terminate(current);
    if (current.spec.nodeName === undefined && current.status?.phase === undefined) this.schedule(current);
  }

  private terminate(pod: Pod): void {
    if (pod.status?.phase === 'Running') this.opts.onTerminate?.(pod);
    this.later(this.opts.terminateDelayMs ?? 5, () => {
      this.api.store.remove(POD(this.api), pod.metadata.namespace, pod.metadata.name);
    });
  }

  private targetNode(pod: Pod): string | undefined {
    if (pod.spec.nodeName) return pod.spec.nodeName;
    const terms =
      pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ??
      [];
    return terms.flatMap((t) => t.matchFields ?? []).find((f) => f.key === 'metadata.name')?.values[0];
  }

  private fits(pod: Pod, node: K8sObject): boolean {
    const alloc = (node['status'] as { allocatable?: Record<string, string> }).allocatable ?? {};
    const used: Record<string, number> = {};
    for (const p of this.pods().filter(
      (x) =>
        x.spec.nodeName === node.metadata.name && !['Succeeded', 'Failed'].includes(x.status?.phase ?? ''),
    ))
      for (const c of p.spec.containers)
        for (const [r, q] of Object.entries(c.resources?.requests ?? {}))
          used[r] = (used[r] ?? 0) + quantity(q);
    const want: Record<string, number> = {};
    for (const c of pod.spec.containers)
      for (const [r, q] of Object.entries(c.resources?.requests ?? {}))
        want[r] = (want[r] ?? 0) + quantity(q);
    return Object.entries(want).every(([r, q]) => (used[r] ?? 0) + q <= quantity(alloc[r] ?? '0') + 1e-9);
  }

  private schedule(pod: Pod): void {
    const target = this.targetNode(pod);
    const node = target ? this.api.store.get(NODE(this.api), undefined, target) : undefined;
    if (!node || !this.fits(pod, node)) {
      const message = node
        ? `0/1 nodes are available: 1 Insufficient resources.`
        : `0/1 nodes are available: node "${target}" not found.`;
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
      return;
    }
    const bound = { ...pod, spec: { ...pod.spec, nodeName: node.metadata.name } };
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
