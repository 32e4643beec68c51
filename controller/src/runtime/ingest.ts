/**
 * MQTT ingest, independent of any client library: topic + bytes in, validated records out.
 * Every message is decoded against the `shared/` schemas (metrics in wire version 1, one record, or
 * 2, a batch), de-duplicated by (task, seq), and either delivered to the sink or counted as a
 * rejection by reason. Nothing here throws: one bad message, one bad record of a batch, or a sink that
 * fails on one record never affects the next.
 *
 * Listeners hear which (task, seq) are stored — accepted now, or already stored (a duplicate) — so the
 * watermark publisher can tell the sidecar what it may forget (ADR 0012).
 */
import {
  decodeMetricsPayload,
  decodePayload,
  RejectCounter,
  type Decoded,
  type RejectReason,
} from '../../../shared/src/decode';
import { taskStatusSchema, type MetricsRecord, type TaskStatus } from '../../../shared/src/schemas';
import { metricsTopic, parseTopic, taskKey, type TaskId } from '../../../shared/src/topics';
import { SeqSet } from './seq-set';

/** What the sink did with a record: stored it, or could not place it (no such job, yet). */
export type SinkOutcome = 'stored' | 'unknown-job';

export interface IngestSink {
  /** Stores and uses one record. Throwing counts as a sink error; the record is not marked seen. */
  onRecord(task: TaskId, record: MetricsRecord): SinkOutcome | void;
  onStatus(task: TaskId, status: TaskStatus): void;
}

/** Hears what is stored, for end-to-end acknowledgement. */
export interface StoredListener {
  /** `seq` of `task` is stored (now, or it already was). */
  stored(task: TaskId, seq: number, seqs: SeqSet): void;
  /** A job's de-duplication state was dropped (the job was removed). */
  forgotten(tasks: readonly TaskId[]): void;
}

export interface IngestCounters {
  readonly received: number;
  readonly duplicates: number;
  readonly rejected: Partial<Record<RejectReason, number>>;
  readonly rejectedTotal: number;
  readonly sinkErrors: number;
}

export type RejectHandler = (reason: RejectReason, topic: string, detail: string, field?: string) => void;

export type HandleOutcome = 'accepted' | RejectReason | 'ignored';

interface TaskSeqs {
  readonly task: TaskId;
  readonly seqs: SeqSet;
}

export class Ingest {
  private readonly seen = new Map<string, TaskSeqs>();
  private readonly rejects = new RejectCounter();
  private readonly listeners = new Set<StoredListener>();
  private received = 0;
  private sinkErrors = 0;

  constructor(
    private readonly sink: IngestSink,
    private readonly onReject: RejectHandler = () => {},
    private readonly onSinkError: (err: unknown) => void = () => {},
  ) {}

  /** Adds a listener of stored records; returns its removal. */
  listen(l: StoredListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /**
   * Handles one message. Returns what happened to it, for metrics and tests: for a batch,
   * `accepted` when every record was, else the first record's rejection reason.
   */
  handle(topic: string, payload: Uint8Array | string): HandleOutcome {
    const parsed = parseTopic(topic);
    if (parsed === null) return this.reject('unknown-topic', topic, 'not an optimus topic');
    if (parsed.kind !== 'metrics' && parsed.kind !== 'status') return 'ignored';
    if (parsed.kind === 'status') {
      // Retained status messages are cleared with an empty payload: not an error.
      if (payload.length === 0) return 'ignored';
      const d = decodePayload(taskStatusSchema, payload);
      if (!d.ok) return this.reject(d.reason, topic, d.detail, d.field);
      this.deliver(() => this.sink.onStatus(parsed.task, d.value));
      return 'accepted';
    }
    const m = decodeMetricsPayload(payload);
    if (!m.ok) return this.reject(m.reason, topic, m.detail, m.field);
    let outcome: HandleOutcome = 'accepted';
    for (const r of m.records) {
      const one = this.record(parsed.task, topic, r);
      if (outcome === 'accepted' && one !== 'accepted') outcome = one;
    }
    return outcome;
  }

  /**
   * A record that is already a value (the simulator's emulated sidecars): the same de-duplication
   * and delivery as {@link handle}, without the bytes to decode.
   */
  accept(task: TaskId, record: MetricsRecord): HandleOutcome {
    return this.take(task, metricsTopic(task), record);
  }

  /** Forgets the de-duplication state of a job's tasks (a removed job may come back under its name). */
  forgetJob(namespace: string, job: string): void {
    const prefix = `${namespace}/${job}/`;
    const tasks: TaskId[] = [];
    for (const [key, t] of this.seen)
      if (key.startsWith(prefix)) {
        tasks.push(t.task);
        this.seen.delete(key);
      }
    if (tasks.length > 0) for (const l of this.listeners) l.forgotten(tasks);
  }

  /**
   * Replays a record already accepted in an earlier life of the controller (from the store):
   * rebuilds the de-duplication state and the observations without counting it as new traffic.
   */
  replay(task: TaskId, record: MetricsRecord): void {
    if (this.hasSeen(task, record.seq)) return;
    if (this.store(task, record) !== 'stored') return;
    this.seqsOf(task).add(record.seq);
    this.received += 1;
  }

  /** Distinct records received per task key, and the highest seq seen. */
  perTask(): Map<string, { received: number; maxSeq: number }> {
    const out = new Map<string, { received: number; maxSeq: number }>();
    for (const [k, t] of this.seen) out.set(k, { received: t.seqs.size, maxSeq: t.seqs.max });
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

  private record(task: TaskId, topic: string, d: Decoded<MetricsRecord>): HandleOutcome {
    if (!d.ok) return this.reject(d.reason, topic, d.detail, d.field);
    return this.take(task, topic, d.value);
  }

  /** De-duplicates, stores and acknowledges one valid record (from the wire or from the simulator). */
  private take(task: TaskId, topic: string, record: MetricsRecord): HandleOutcome {
    const seq = record.seq;
    const known = this.seen.get(taskKey(task));
    if (known?.seqs.has(seq)) {
      // Stored before: the sender has not heard so (or lost the watermark). Tell it again.
      this.notify(task, seq, known.seqs);
      return this.reject('duplicate', topic, `seq ${seq}`);
    }
    // Marked as seen only once the sink took it: a record it could not use (a job not known yet)
    // is not a duplicate when the sidecar sends it again.
    const outcome = this.store(task, record);
    if (outcome === 'error') return 'accepted';
    if (outcome === 'unknown-job')
      return this.reject('unknown-job', topic, `no job ${task.namespace}/${task.job}`);
    const seqs = this.seqsOf(task);
    seqs.add(seq);
    this.received += 1;
    this.notify(task, seq, seqs);
    return 'accepted';
  }

  private notify(task: TaskId, seq: number, seqs: SeqSet): void {
    for (const l of this.listeners) {
      try {
        l.stored(task, seq, seqs);
      } catch (err) {
        this.onSinkError(err);
      }
    }
  }

  private hasSeen(task: TaskId, seq: number): boolean {
    return this.seen.get(taskKey(task))?.seqs.has(seq) ?? false;
  }

  private seqsOf(task: TaskId): SeqSet {
    const key = taskKey(task);
    let t = this.seen.get(key);
    if (!t) this.seen.set(key, (t = { task, seqs: new SeqSet() }));
    return t.seqs;
  }

  private reject(reason: RejectReason, topic: string, detail: string, field?: string): RejectReason {
    this.rejects.add(reason);
    this.onReject(reason, topic, detail, field);
    return reason;
  }

  /** What the sink did with a record; `error` when it threw (counted). */
  private store(task: TaskId, record: MetricsRecord): SinkOutcome | 'error' {
    try {
      return this.sink.onRecord(task, record) ?? 'stored';
    } catch (err) {
      this.sinkErrors += 1;
      this.onSinkError(err);
      return 'error';
    }
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
