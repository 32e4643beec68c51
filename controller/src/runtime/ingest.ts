/**
 * MQTT ingest, independent of any client library: topic + bytes in, validated records out.
 * Every message is decoded against the `shared/` schemas, de-duplicated by (task, seq), and
 * either delivered to the sink or counted as a rejection by reason. Nothing here throws:
 * one bad message — or a sink that fails on one record — never affects the next.
 */
import { decodePayload, RejectCounter, type RejectReason } from '../../../shared/src/decode';
import {
  metricsRecordSchema,
  taskStatusSchema,
  type MetricsRecord,
  type TaskStatus,
} from '../../../shared/src/schemas';
import { parseTopic, taskKey, type TaskId } from '../../../shared/src/topics';
import { SeqSet } from './seq-set';

export interface IngestSink {
  onRecord(task: TaskId, record: MetricsRecord): void;
  onStatus(task: TaskId, status: TaskStatus): void;
}

export interface IngestCounters {
  readonly received: number;
  readonly duplicates: number;
  readonly rejected: Partial<Record<RejectReason, number>>;
  readonly rejectedTotal: number;
  readonly sinkErrors: number;
}

export class Ingest {
  private readonly seen = new Map<string, SeqSet>();
  private readonly rejects = new RejectCounter();
  private received = 0;
  private sinkErrors = 0;

  constructor(
    private readonly sink: IngestSink,
    private readonly onReject: (reason: RejectReason, topic: string, detail: string) => void = () => {},
    private readonly onSinkError: (err: unknown) => void = () => {},
  ) {}

  /** Handles one message. Returns what happened, for metrics and tests. */
  handle(topic: string, payload: Uint8Array | string): 'accepted' | RejectReason | 'ignored' {
    const parsed = parseTopic(topic);
    if (parsed === null) return this.reject('unknown-topic', topic, 'not an optimus topic');
    if (parsed.kind === 'plan' || parsed.kind === 'controller-status') return 'ignored';
    if (parsed.kind === 'status') {
      // Retained status messages are cleared with an empty payload: not an error.
      if (payload.length === 0) return 'ignored';
      const d = decodePayload(taskStatusSchema, payload);
      if (!d.ok) return this.reject(d.reason, topic, d.detail);
      this.deliver(() => this.sink.onStatus(parsed.task, d.value));
      return 'accepted';
    }
    const d = decodePayload(metricsRecordSchema, payload);
    if (!d.ok) return this.reject(d.reason, topic, d.detail);
    if (this.hasSeen(parsed.task, d.value.seq)) return this.reject('duplicate', topic, `seq ${d.value.seq}`);
    // Marked as seen only once the sink took it: a record it could not use (a job not known yet)
    // is not a duplicate when the sidecar sends it again.
    if (!this.deliver(() => this.sink.onRecord(parsed.task, d.value))) return 'accepted';
    this.seqsOf(parsed.task).add(d.value.seq);
    this.received += 1;
    return 'accepted';
  }

  /**
   * A record that is already a value (the simulator's emulated sidecars): the same de-duplication
   * and delivery as {@link handle}, without the bytes to decode.
   */
  accept(task: TaskId, record: MetricsRecord): 'accepted' | 'duplicate' {
    if (this.hasSeen(task, record.seq)) {
      this.rejects.add('duplicate');
      return 'duplicate';
    }
    if (this.deliver(() => this.sink.onRecord(task, record))) {
      this.seqsOf(task).add(record.seq);
      this.received += 1;
    }
    return 'accepted';
  }

  /** Forgets the de-duplication state of a job's tasks (a removed job may come back under its name). */
  forgetJob(namespace: string, job: string): void {
    const prefix = `${namespace}/${job}/`;
    for (const key of [...this.seen.keys()]) if (key.startsWith(prefix)) this.seen.delete(key);
  }

  /**
   * Replays a record already accepted in an earlier life of the controller (from the store):
   * rebuilds the de-duplication state and the observations without counting it as new traffic.
   */
  replay(task: TaskId, record: MetricsRecord): void {
    if (this.hasSeen(task, record.seq)) return;
    if (!this.deliver(() => this.sink.onRecord(task, record))) return;
    this.seqsOf(task).add(record.seq);
    this.received += 1;
  }

  /** Distinct records received per task key, and the highest seq seen. */
  perTask(): Map<string, { received: number; maxSeq: number }> {
    const out = new Map<string, { received: number; maxSeq: number }>();
    for (const [k, s] of this.seen) out.set(k, { received: s.size, maxSeq: s.max });
    return out;
  }

  counters(): IngestCounters {
    return {
      received: this.received,
      duplicates: this.rejects.get('duplicate'),
      rejected: this.rejects.snapshot(),
      rejectedTotal: this.rejects.total(),
      sinkErrors: this.sinkErrors,
    };
  }

  private hasSeen(task: TaskId, seq: number): boolean {
    return this.seen.get(taskKey(task))?.has(seq) ?? false;
  }

  private seqsOf(task: TaskId): SeqSet {
    const key = taskKey(task);
    let set = this.seen.get(key);
    if (!set) this.seen.set(key, (set = new SeqSet()));
    return set;
  }

  private reject(reason: RejectReason, topic: string, detail: string): RejectReason {
    this.rejects.add(reason);
    this.onReject(reason, topic, detail);
    return reason;
  }

  /** True when the sink took the message. */
  private deliver(fn: () => void): boolean {
    try {
      fn();
      return true;
    } catch (err) {
      this.sinkErrors += 1;
      this.onSinkError(err);
      return false;
    }
  }
}
