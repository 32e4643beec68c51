/**
 * Bytes → lines → parsed lines → records with sequence numbers → disk outbox + courier.
 * Implements {@link TailSink}, so the file tailer and the stdin reader feed it alike.
 */
import type { MetricsRecord } from '../../shared/src/schemas';
import type { Courier } from './delivery/courier';
import type { Outbox, OutboxEntry } from './delivery/outbox';
import type { TailSink } from './input/file-tailer';
import { LineSplitter } from './input/line-splitter';
import type { Logger } from './log';
import { type DraftRecord, RecordAssembler } from './parse/assembler';
import type { LineParser } from './parse/types';
import { validateMetricsRecord } from './validate/wire';

export interface PipelineOptions {
  parser: LineParser;
  batchSize: number | null;
  maxLineBytes: number;
  /** Reading pauses while this many records are unacknowledged. */
  maxPending: number;
  nextSeq: number;
  /**
   * Where reading resumes (the saved position). Progress reported before any new byte arrives
   * must repeat it, not fall back to the file's start: a sidecar stopped before reading anything
   * would otherwise make its successor re-read and re-number the whole log.
   */
  start?: { ino: number | null; pos: number };
  outbox: Outbox;
  courier: Courier;
  log: Logger;
  now: () => number;
  /** Called after each read with the position to persist (debounced by the caller). */
  onProgress: (p: Progress) => void;
  onFinished: () => void;
}

/** Counters reported in logs and asserted in tests. */
export interface PipelineCounters {
  lines: number;
  records: number;
  unparsed: number;
  rejected: number;
  longLines: number;
  resets: number;
  /** Failed outbox appends (a full or failing disk). */
  diskErrors: number;
}

interface Progress {
  ino: number | null;
  pos: number;
  nextSeq: number;
}

export class Pipeline implements TailSink {
  readonly counters: PipelineCounters = {
    lines: 0,
    records: 0,
    unparsed: 0,
    rejected: 0,
    longLines: 0,
    resets: 0,
    diskErrors: 0,
  };
  /** Numbered records the outbox could not take yet (in order): neither sent nor counted as read. */
  private unpersisted: OutboxEntry[] = [];
  private readonly splitter: LineSplitter;
  private readonly assembler: RecordAssembler;
  private drafts: DraftRecord[] = [];
  private wakeId = 0;
  private lineTs = 0;
  private ino: number | null = null;
  private pos = 0;
  private nextSeq: number;

  constructor(private readonly opts: PipelineOptions) {
    this.nextSeq = opts.nextSeq;
    this.ino = opts.start?.ino ?? null;
    this.pos = opts.start?.pos ?? 0;
    this.assembler = new RecordAssembler({ batchSize: opts.batchSize, emit: (r) => this.drafts.push(r) });
    this.splitter = new LineSplitter({ maxLineBytes: opts.maxLineBytes, onLine: (l) => this.line(l) });
  }

  get seq(): number {
    return this.nextSeq;
  }

  bytes(buf: Buffer, start: number, end: number, posAfter: number, ino: number | null): void {
    this.lineTs = this.opts.now();
    this.splitter.push(buf, start, end);
    this.ino = ino;
    this.pos = posAfter;
  }

  fileEnded(): void {
    this.splitter.flushPartial();
    this.assembler.flush();
  }

  reset(): void {
    this.splitter.discard();
    this.assembler.reset();
    this.pos = 0;
    this.counters.resets++;
    this.opts.log.info('log truncated or replaced; reading it from the start');
  }

  endOfRead(): void {
    this.assembler.flush();
    this.counters.longLines = this.splitter.longLines;
    const pos = this.pos - this.splitter.pendingBytes;
    for (const e of this.sequence(pos)) this.unpersisted.push(e);
    this.wakeId++;
    this.persist({ ino: this.ino, pos, nextSeq: this.nextSeq });
  }

  /**
   * A record is sent only once it is in the outbox, and the saved position never moves past a
   * record that is not: after a crash the same lines are numbered again with the same seqs, and
   * since none of them ever left the process, no seq can reach the controller with two contents.
   * A full disk therefore pauses reading (the log holds the lines) until an append succeeds; every
   * wake-up of the tailer (at least each poll) tries again.
   */
  private persist(at: Progress): void {
    if (this.unpersisted.length > 0) {
      if (!this.opts.outbox.append(this.unpersisted)) {
        this.counters.diskErrors++;
        const n = this.counters.diskErrors;
        if (n === 1 || n % 60 === 0)
          this.opts.log.warn('cannot write the outbox; reading paused until it can', {
            error: this.opts.outbox.lastError?.code ?? String(this.opts.outbox.lastError),
            waiting: this.unpersisted.length,
            attempts: n,
          });
        return;
      }
      const ready = this.unpersisted;
      this.unpersisted = [];
      this.opts.courier.enqueueAll(ready);
    }
    this.opts.onProgress(at);
  }

  canRead(): boolean {
    return this.unpersisted.length === 0 && this.opts.courier.pendingCount < this.opts.maxPending;
  }

  mayIdle(): boolean {
    return this.unpersisted.length === 0 && this.opts.courier.pendingCount === 0;
  }

  finished(): void {
    this.endOfRead();
    this.opts.onFinished();
  }

  private line(text: string): void {
    this.counters.lines++;
    const r = this.opts.parser.parse(text);
    if (r === null) {
      this.counters.unparsed++;
      const n = this.counters.unparsed;
      if (n <= 20 || n % 1000 === 0) this.opts.log.debug('unparsed line', { n, line: text.slice(0, 200) });
    } else if (r !== 'recognized') {
      this.assembler.accept(r, this.lineTs, this.wakeId);
    }
  }

  private sequence(pos: number): OutboxEntry[] {
    const out: OutboxEntry[] = [];
    for (const d of this.drafts) {
      const record: MetricsRecord = { v: 1, seq: this.nextSeq, ...d };
      const problem = validateMetricsRecord(record);
      if (problem !== null) {
        this.counters.rejected++;
        this.opts.log.warn('record failed schema validation; dropped', { problem });
        continue;
      }
      this.nextSeq++;
      this.counters.records++;
      out.push({ seq: record.seq, ino: this.ino, pos, payload: JSON.stringify(record) });
    }
    this.drafts = [];
    return out;
  }
}
