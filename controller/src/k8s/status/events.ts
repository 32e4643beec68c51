/**
 * Kubernetes Events (`events.k8s.io/v1`) about OptimusJobs, so `kubectl describe optimusjob` and
 * `kubectl get events` show what the scheduler did. Best effort on purpose: `emit` never throws
 * and never waits, a failed write is counted and reported to `onError`, and a rollout never
 * waits for an Event. Identical events (same job uid, reason and note) within the de-dup window
 * are sent once, so a loop that meets the same state every round does not flood the API server.
 */
import type { EventsV1Event } from '@kubernetes/client-node';
import { V1MicroTime } from '@kubernetes/client-node';
import { Counter, type Registry } from 'prom-client';
import type { JobShape } from '../../scheduling/types';
import type { KubeClients } from '../api/clients';
import type { OptimusJob } from '../api/optimus-job';
import { API_VERSION, GROUP, KIND } from '../api/names';

/** Why an event was emitted (UpperCamelCase, as Kubernetes reasons are). */
export const EVENT_REASON = {
  /** The job's first set of pods runs. */
  Started: 'Started',
  /** The job runs again with a new shape after a checkpoint–restart. */
  Resized: 'Resized',
  /** A straggling worker was moved to another server. */
  WorkerReplaced: 'WorkerReplaced',
  /** The policy took all the job's pods away (it waits for resources). */
  Suspended: 'Suspended',
  /** A stop was confirmed, or not, by a checkpoint line. */
  Checkpointed: 'Checkpointed',
  NoCheckpoint: 'NoCheckpoint',
  /** A new shape could not start; the previous one runs again. */
  RolledBack: 'RolledBack',
  /** A new shape could not start and there was no way back: the job holds nothing. */
  RolloutFailed: 'RolloutFailed',
  Completed: 'Completed',
  Failed: 'Failed',
  /** The spec was rejected by the controller's own check. */
  Rejected: 'Rejected',
} as const;
export type EventReason = (typeof EVENT_REASON)[keyof typeof EVENT_REASON];

export interface JobEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: EventReason;
  /** What the controller did or failed to do (`Start`, `Resize`, `Rollback`, …). */
  readonly action: string;
  readonly note: string;
}

/** The object an event is about: enough of an OptimusJob for an object reference. */
export type EventSubject = Pick<OptimusJob, 'metadata'>;

/** Where job events go. The executor, rollouts and completion only see this. */
export interface JobEvents {
  emit(job: EventSubject, event: JobEvent): void;
  /** Resolves once the writes started so far have settled, or after `timeoutMs` (shutdown, tests). */
  idle(timeoutMs?: number): Promise<void>;
  /** What happened to the events so far (a recorder that writes them keeps counts). */
  readonly stats?: Readonly<EventStats>;
}

/** Discards every event (a backend built without a recorder, unit tests). */
export const NO_EVENTS: JobEvents = { emit: () => undefined, idle: () => Promise.resolve() };

/** `2 PS / 4 workers`, the shape as `kubectl describe` readers expect it. */
export const shapeText = (s: JobShape): string =>
  `${s.ps} PS / ${s.workers} worker${s.workers === 1 ? '' : 's'}`;

export const REPORTING_CONTROLLER = `${GROUP}/controller` as const;
const NOTE_MAX_BYTES = 1024;

export interface EventRecorderOptions {
  /** Creates one Event in `namespace` (see {@link eventWriterFor}). */
  readonly write: (namespace: string, body: EventsV1Event) => Promise<unknown>;
  /** This replica (pod name). */
  readonly reportingInstance: string;
  readonly reportingController?: string;
  readonly now?: () => number;
  /** Identical events within this window are sent once (default 10 minutes). */
  readonly dedupWindowMs?: number;
  /** Keys remembered for de-dup, oldest forgotten first (default 1024). */
  readonly maxRemembered?: number;
  /** Writes in flight beyond this are dropped and counted (a hung API must not pile them up). */
  readonly maxInFlight?: number;
  readonly onError?: (err: unknown, event: JobEvent) => void;
}

export interface EventStats {
  sent: number;
  failed: number;
  deduplicated: number;
  dropped: number;
}

/** The writer of the real client: `POST /apis/events.k8s.io/v1/namespaces/{ns}/events`. */
export const eventWriterFor =
  (clients: Pick<KubeClients, 'events'>): EventRecorderOptions['write'] =>
  (namespace, body) =>
    clients.events.createNamespacedEvent({ namespace, body });

/** Cuts `s` to at most `max` UTF-8 bytes, marking the cut with `…`. */
function truncateBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = s.slice(0, max);
  while (Buffer.byteLength(out) > max - 3) out = out.slice(0, -1); // '…' takes 3 bytes
  return `${out}…`;
}

export class EventRecorder implements JobEvents {
  readonly stats: EventStats = { sent: 0, failed: 0, deduplicated: 0, dropped: 0 };
  private readonly seen = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private seq = 0;

  constructor(private readonly o: EventRecorderOptions) {}

  emit(job: EventSubject, event: JobEvent): void {
    const now = (this.o.now ?? Date.now)();
    const note = truncateBytes(event.note, NOTE_MAX_BYTES);
    const key = `${job.metadata.uid ?? `${job.metadata.namespace}/${job.metadata.name}`}|${event.reason}|${note}`;
    const last = this.seen.get(key);
    if (last !== undefined && now - last < (this.o.dedupWindowMs ?? 600_000)) {
      this.stats.deduplicated++;
      return;
    }
    if (this.inFlight.size >= (this.o.maxInFlight ?? 64)) {
      this.stats.dropped++;
      return;
    }
    this.remember(key, now);
    const body = this.bodyOf(job, { ...event, note }, now);
    // Through a microtask: a writer that throws synchronously must not throw out of `emit` either.
    const write = Promise.resolve()
      .then(() => this.o.write(job.metadata.namespace, body))
      .then(() => {
        this.stats.sent++;
      })
      .catch((err: unknown) => {
        this.stats.failed++;
        this.seen.delete(key); // not delivered: the next occurrence may try again
        this.o.onError?.(err, event);
      })
      .finally(() => this.inFlight.delete(write));
    this.inFlight.add(write);
  }

  async idle(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    const settled = (async () => {
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    })();
    await Promise.race([settled, timeout]);
    clearTimeout(timer);
  }

  private remember(key: string, now: number): void {
    this.seen.delete(key); // re-insert: Map order is the eviction order
    this.seen.set(key, now);
    const max = this.o.maxRemembered ?? 1024;
    for (const k of this.seen.keys()) {
      if (this.seen.size <= max) break;
      this.seen.delete(k);
    }
  }

  private bodyOf(job: EventSubject, e: JobEvent, now: number): EventsV1Event {
    const m = job.metadata;
    // client-go names events `<object>.<unix nanos in hex>`; a sequence keeps ours unique within a ms.
    const suffix = `${now.toString(16)}${(this.seq++ % 0x10000).toString(16).padStart(4, '0')}`;
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${m.name.slice(0, 253 - suffix.length - 1)}.${suffix}`, namespace: m.namespace },
      // V1MicroTime serializes with microseconds, as the API server requires for eventTime.
      eventTime: new V1MicroTime(now),
      type: e.type,
      reason: e.reason,
      action: e.action,
      note: e.note,
      regarding: {
        apiVersion: API_VERSION,
        kind: KIND,
        name: m.name,
        namespace: m.namespace,
        ...(m.uid ? { uid: m.uid } : {}),
        ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
      },
      reportingController: this.o.reportingController ?? REPORTING_CONTROLLER,
      reportingInstance: this.o.reportingInstance.slice(0, 128),
    };
  }
}

/** Exposes the counts of `events` as `optimus_kubernetes_events_total{result}` on `registry`. */
export function registerEventMetrics(registry: Registry, events: JobEvents): void {
  const stats = events.stats;
  if (stats === undefined) return;
  new Counter({
    name: 'optimus_kubernetes_events_total',
    help: 'Kubernetes Events about OptimusJobs, by what became of them',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      for (const result of ['sent', 'failed', 'deduplicated', 'dropped'] as const)
        this.inc({ result }, stats[result]);
    },
  });
}
