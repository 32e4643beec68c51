/**
 * The Kubernetes backend, composed: executor (the only writer of pods), cluster view and
 * observation (informers on nodes and pods), job source (informer on OptimusJobs), status
 * writers, leader election and the sidecar-injection webhook. The runtime stays backend-agnostic
 * and drives it.
 *
 * @example
 * const backend = createKubernetesBackend({ config: loadKubeConfig(), namespace: 'optimus-system', identity: 'pod-a' });
 * await backend.start();
 * if (backend.leader.isLeader()) await backend.executor.execute(plan);
 */
import type { KubeConfig, V1Namespace, V1Pod } from '@kubernetes/client-node';
import type { ExecuteOptions, ExecutionResult, Executor, Plan } from '../planning/types';
import type { Observation } from '../runtime/backend';
import type { ServerSnapshot } from '../scheduling/types';
import type { CheckpointSignal } from './rollout/checkpoint-signal';
import { CheckpointLedger } from './rollout/checkpoint-signal';
import { makeClients } from './api/clients';
import type { KubeClients } from './api/clients';
import { isOurPod, serversFrom } from './observe/cluster-view';
import type { ExecutorOptions } from './rollout/executor-factory';
import { createExecutor, DEFAULT_TIMINGS } from './rollout/executor-factory';
import type { JobEvents } from './status/events';
import { JobSource } from './observe/job-source';
import { ANNOTATION_INJECT } from './api/names';
import type { LeaderElector } from './leader/leader-election';
import { LeaseElector } from './leader/leader-election';
import { observeJobs } from './observe/observe';
import { StatusReporter } from './status/status-reporter';
import { WatchedList } from './api/watched-list';
import type { SidecarConfig } from './webhook/sidecar-config';
import { supportsNativeSidecars } from './webhook/sidecar-config';
import type { WebhookServer, WebhookStats } from './webhook/webhook-server';
import { startWebhookServer } from './webhook/webhook-server';

export interface KubernetesBackendOptions {
  readonly config: KubeConfig;
  /** The controller's own namespace (`POD_NAMESPACE`): where the Lease lives. */
  readonly namespace: string;
  /** This replica's identity (`POD_NAME`). */
  readonly identity: string;
  /** Watch OptimusJobs of one namespace only (default: all). */
  readonly watchNamespace?: string;
  /** Watch the namespaces with these labels (`k=v,…`): where jobs may run besides named ones. */
  readonly namespaceSelector?: string;
  readonly leaderElection?: {
    readonly enabled?: boolean;
    readonly leaseName?: string;
    readonly leaseDurationSec?: number;
    readonly renewDeadlineMs?: number;
    readonly retryPeriodMs?: number;
  };
  readonly executor?: Omit<ExecutorOptions, 'clients' | 'checkpoint' | 'pods'>;
  /** Defaults to an in-memory ledger the runtime feeds (`backend.checkpoints.record`). */
  readonly checkpoint?: CheckpointSignal;
  /** Serve the sidecar-injection webhook; `native: 'auto'` asks the API server's version. */
  readonly webhook?: {
    readonly port: number;
    readonly host?: string;
    readonly cert: string | Buffer;
    readonly key: string | Buffer;
    readonly sidecar: Omit<SidecarConfig, 'native'> & { readonly native: boolean | 'auto' };
  };
  readonly onError?: (err: unknown) => void;
}

export interface KubernetesBackend {
  readonly clients: KubeClients;
  /** Refuses every action while this replica is not the leader. */
  readonly executor: Executor;
  readonly jobs: JobSource;
  readonly status: StatusReporter;
  readonly leader: LeaderElector;
  readonly checkpoints: CheckpointLedger;
  /** Kubernetes Events about OptimusJobs (best effort). */
  readonly events: JobEvents;
  /** Servers with capacity and the resources held by pods that are not ours. */
  servers(): ServerSnapshot[];
  /** What runs, from the informer caches: servers, and every OptimusJob with its pods' tasks. */
  observe(): Observation;
  /** Calls `fn` after every change of a pod owned by an OptimusJob; returns the unsubscribe. */
  onPodChange(fn: () => void): () => void;
  /** The webhook's bound port once started (undefined without a webhook). */
  webhookPort(): number | undefined;
  /** The webhook's review counts once started (undefined without a webhook). */
  webhookStats(): WebhookStats | undefined;
  /** Namespaces with pods that ask for the sidecar (they need its credentials Secret). */
  injectedPodNamespaces(): string[];
  /** Namespaces that carry the selector's labels; null without a selector. */
  selectedNamespaces(): ReadonlySet<string> | null;
  /** Calls `fn` after a selected namespace came or went; returns the unsubscribe. */
  onNamespaceChange(fn: () => void): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

class LeaderOnlyExecutor implements Executor {
  constructor(
    private readonly inner: Executor,
    private readonly leader: LeaderElector,
  ) {}

  async execute(plan: Plan, options?: ExecuteOptions): Promise<ExecutionResult> {
    if (this.leader.isLeader()) return this.inner.execute(plan, options);
    return {
      applied: [],
      failed: plan.actions.map((action) => ({ action, error: 'this controller replica is not the leader' })),
    };
  }
}

/** An elector for a single replica: always the leader. */
const soleLeader = (): LeaderElector => ({
  start: () => undefined,
  stop: async () => undefined,
  isLeader: () => true,
  onChange: () => () => undefined,
});

export function createKubernetesBackend(o: KubernetesBackendOptions): KubernetesBackend {
  const clients = makeClients(o.config);
  const checkpoints = new CheckpointLedger();
  const onError = o.onError ? { onError: o.onError } : {};
  const nodes = new WatchedList({
    config: o.config,
    path: '/api/v1/nodes',
    list: () => clients.core.listNode(),
    ...onError,
  });
  const pods = new WatchedList<V1Pod>({
    config: o.config,
    path: '/api/v1/pods',
    list: () => clients.core.listPodForAllNamespaces(),
    ...onError,
  });
  const selector = o.namespaceSelector;
  const namespaces = selector
    ? new WatchedList<V1Namespace>({
        config: o.config,
        path: '/api/v1/namespaces',
        list: () => clients.core.listNamespace({ labelSelector: selector }),
        labelSelector: selector,
        ...onError,
      })
    : null;
  const built = createExecutor({
    reportingInstance: o.identity,
    ...(o.onError ? { onEventError: o.onError } : {}),
    ...o.executor,
    clients,
    pods,
    checkpoint: o.checkpoint ?? checkpoints,
  });
  const timings = { ...DEFAULT_TIMINGS, ...o.executor?.timings };
  const now = o.executor?.now ?? Date.now;
  const le = o.leaderElection ?? {};
  const leader: LeaderElector =
    le.enabled === false
      ? soleLeader()
      : new LeaseElector({
          clients,
          namespace: o.namespace,
          identity: o.identity,
          leaseName: le.leaseName ?? 'optimus-controller',
          ...(le.leaseDurationSec !== undefined ? { leaseDurationSec: le.leaseDurationSec } : {}),
          ...(le.renewDeadlineMs !== undefined ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
          ...(le.retryPeriodMs !== undefined ? { retryPeriodMs: le.retryPeriodMs } : {}),
          ...(o.onError ? { onError: o.onError } : {}),
        });
  const jobs = new JobSource(clients, {
    ...(o.watchNamespace ? { namespace: o.watchNamespace } : {}),
    ...onError,
  });
  let webhook: WebhookServer | undefined;

  return {
    clients,
    executor: new LeaderOnlyExecutor(built.executor, leader),
    jobs,
    status: new StatusReporter(built.jobs),
    leader,
    checkpoints,
    events: built.events,
    servers: () => serversFrom(nodes.items(), pods.items()),
    observe: () => ({
      servers: serversFrom(nodes.items(), pods.items()),
      jobs: observeJobs(jobs.items(), pods.items(), {
        ...timings,
        nowMs: now(),
        rollingOut: (id) => built.executor.rollingOut(id),
      }),
    }),
    onPodChange: (fn) => pods.onChange((pod) => isOurPod(pod) && fn()),
    webhookPort: () => webhook?.port,
    webhookStats: () => webhook?.stats,
    injectedPodNamespaces: () => [
      ...new Set(
        pods
          .items()
          .filter((p) => p.metadata?.annotations?.[ANNOTATION_INJECT] === 'true')
          .map((p) => p.metadata?.namespace ?? ''),
      ),
    ],
    selectedNamespaces: () =>
      namespaces ? new Set(namespaces.items().map((n) => n.metadata?.name ?? '')) : null,
    onNamespaceChange: (fn) => namespaces?.onChange(() => fn()) ?? (() => undefined),
    start: async () => {
      if (o.webhook) {
        const { native, ...rest } = o.webhook.sidecar;
        const isNative =
          native === 'auto' ? supportsNativeSidecars((await clients.version.getCode()).gitVersion) : native;
        webhook = await startWebhookServer({
          ...o.webhook,
          sidecar: { ...rest, native: isNative },
          ...(o.onError ? { onReject: (r) => o.onError?.(new Error(r)) } : {}),
        });
      }
      await Promise.all([nodes.start(), pods.start(), jobs.start(), namespaces?.start()]);
      leader.start();
    },
    stop: async () => {
      await leader.stop();
      await Promise.all([nodes.stop(), pods.stop(), jobs.stop(), namespaces?.stop()]);
      await webhook?.close();
    },
  };
}

export { CheckpointLedger } from './rollout/checkpoint-signal';
export type { CheckpointSignal } from './rollout/checkpoint-signal';
export { crdManifest, crdYaml, rbacRules } from './api/crd';
export { currentOf, isFinished } from './observe/job-source';
export type { JobEntry } from './observe/job-source';
export { kubeConfigFor, loadKubeConfig } from './api/kube-config';
export { arrivalSeconds, demandOf, parseSpec } from './api/optimus-job';
export type { OptimusJob, OptimusJobSpec, OptimusJobStatus } from './api/optimus-job';
export { mutate } from './webhook/mutate';
export { reviewAdmission } from './webhook/admission';
