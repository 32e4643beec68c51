/** Wires the executor's parts (job API, pod calls, rollouts, events) from clients and options. */
import { hostname } from 'node:os';
import type { CheckpointSignal } from './checkpoint-signal';
import type { KubeClients } from '../api/clients';
import type { JobEvents } from '../status/events';
import { EventRecorder, eventWriterFor } from '../status/events';
import { KubernetesExecutor } from './executor';
import { JobApi } from '../api/job-api';
import type { PodCache } from './job-pods';
import { JobPods } from './job-pods';
import type { RolloutTimings } from './rollout';
import { Rollouts } from './rollout';

export interface ExecutorOptions {
  readonly clients: KubeClients;
  /** The pod informer's cache: what the rollouts read and wait on (started by the caller). */
  readonly pods: PodCache;
  readonly timings?: Partial<RolloutTimings>;
  /** Ms between a wait's safety re-reads of the cache (it wakes on the cache's events too). */
  readonly recheckMs?: number;
  readonly checkpoint?: CheckpointSignal;
  readonly now?: () => number;
  /** Where Kubernetes Events go (default: an {@link EventRecorder} on `clients`). */
  readonly events?: JobEvents;
  /** This replica's name in the Events it writes (`reportingInstance`; default the host name). */
  readonly reportingInstance?: string;
  /** A failed Event write (never fails a rollout; logged by the caller). */
  readonly onEventError?: (err: unknown) => void;
}

export const DEFAULT_TIMINGS: RolloutTimings = {
  startTimeoutMs: 300_000,
  unschedulableGraceMs: 30_000,
  stopSlackMs: 30_000,
  checkpointReportLagMs: 5_000,
};

export function createExecutor(o: ExecutorOptions): {
  executor: KubernetesExecutor;
  jobs: JobApi;
  pods: JobPods;
  rollouts: Rollouts;
  events: JobEvents;
} {
  const now = o.now ?? Date.now;
  const events =
    o.events ??
    new EventRecorder({
      write: eventWriterFor(o.clients),
      reportingInstance: o.reportingInstance ?? hostname(),
      now,
      ...(o.onEventError ? { onError: o.onEventError } : {}),
    });
  const timings = { ...DEFAULT_TIMINGS, ...o.timings };
  const jobs = new JobApi(o.clients);
  // The waits run on real timers, so they measure real time whatever clock the statuses use.
  const pods = new JobPods(o.clients, o.pods, { recheckMs: o.recheckMs ?? 1000, now: Date.now });
  const rollouts = new Rollouts({
    clients: o.clients,
    jobs,
    pods,
    timings,
    now,
    events,
    ...(o.checkpoint ? { checkpoint: o.checkpoint } : {}),
  });
  return {
    executor: new KubernetesExecutor({ jobs, pods, rollouts, timings, now, events }),
    jobs,
    pods,
    rollouts,
    events,
  };
}
