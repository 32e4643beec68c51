/**
 * A stand-in for `src/pipeline.ts`, bundled only into the benchmark's stage builds
 * (`npm run bench:sidecar -- --stage transport|transport-no-outbox`), never into the shipped sidecar.
 *
 * It keeps everything the sidecar does around a record — tailing, line splitting, sequence numbers,
 * the disk outbox (unless the stage drops it), the courier, MQTT framing, acknowledgements and
 * watermarks — and replaces parsing, record assembly, validation and serialisation with a payload
 * written from a template. So the stage's CPU is what the sidecar would cost if those four were free:
 * the bound on what any faster parser or serialiser could gain (ADR 0008, third amendment).
 *
 * The benchmark writes one Speedometer line per batch, batch numbers 0, 50, 100…, so the template's
 * batch is counted rather than parsed (the subscriber times each record by it). The bookkeeping
 * around reads (position, backpressure) repeats the real pipeline's instead of subclassing it, so the
 * shipped class needs no hooks for the benchmark.
 */
import type { OutboxEntry } from '../src/delivery/outbox';
import type { TailSink } from '../src/input/file-tailer';
import { LineSplitter } from '../src/input/line-splitter';
import type { PipelineCounters, PipelineOptions } from '../src/pipeline';

/** Set by the stage build: false drops the outbox write as well. */
declare const __OPTIMUS_BENCH_OUTBOX__: boolean;

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
  private readonly splitter: LineSplitter;
  private entries: OutboxEntry[] = [];
  private lineTs = 0;
  private ino: number | null;
  private pos: number;
  private nextSeq: number;
  private batch = 0;

  constructor(private readonly opts: PipelineOptions) {
    this.nextSeq = opts.nextSeq;
    this.ino = opts.start?.ino ?? null;
    this.pos = opts.start?.pos ?? 0;
    this.splitter = new LineSplitter({ maxLineBytes: opts.maxLineBytes, onLine: () => this.line() });
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
  }

  reset(): void {
    this.splitter.discard();
    this.pos = 0;
    this.counters.resets++;
  }

  endOfRead(): void {
    const pos = this.pos - this.splitter.pendingBytes;
    for (const e of this.entries) e.pos = pos;
    if (this.entries.length > 0) {
      if (__OPTIMUS_BENCH_OUTBOX__ && !this.opts.outbox.append(this.entries)) {
        this.counters.diskErrors++;
        return;
      }
      this.opts.courier.enqueueAll(this.entries);
      this.entries = [];
    }
    this.opts.onProgress({ ino: this.ino, pos, nextSeq: this.nextSeq });
  }

  canRead(): boolean {
    return this.entries.length === 0 && this.opts.courier.pendingCount < this.opts.maxPending;
  }

  mayIdle(): boolean {
    return this.entries.length === 0 && this.opts.courier.pendingCount === 0;
  }

  finished(): void {
    this.endOfRead();
    this.opts.onFinished();
  }

  private line(): void {
    this.counters.lines++;
    this.counters.records++;
    const seq = this.nextSeq++;
    const batch = this.batch;
    this.batch += 50;
    this.entries.push({
      seq,
      ino: this.ino,
      pos: 0,
      payload: `{"v":1,"seq":${seq},"ts":${this.lineTs},"framework":"mxnet","kind":"batch","epoch":0,"batch":${batch},"samplesPerSec":1024.35,"stepTime":0.03125,"loss":null,"lossName":null,"metrics":{"accuracy":0.5}}`,
    });
  }
}
