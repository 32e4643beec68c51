/**
 * End-to-end acknowledgement (ADR 0012): after records are durably stored, the controller publishes a
 * retained watermark per task, `{ v: 1, from, through, ts }` on `…/<role>/<index>/stored`, saying that
 * every seq in [from, through] of that task is stored. The sidecar drops a record from its outbox only
 * once a watermark covers it, so neither a broker that loses its queue nor a controller that dies
 * between acknowledging a message and storing it can lose a record.
 *
 * Watermarks are throttled (one per task per `intervalMs`, after one `durable()` call for all of them),
 * so a steady trickle of records costs the sidecar one extra wake-up per interval, not one per record.
 * The range published is the contiguous run of stored seqs that contains the task's latest record: a
 * gap (a record the broker lost) is never covered, and the sidecar sends that record again.
 */
import type { StoredWatermark } from '../../../shared/src/schemas';
import { storedTopic, taskKey, type TaskId } from '../../../shared/src/topics';
import type { Publisher } from './controller';
import type { StoredListener } from './ingest';
import type { SeqSet } from './seq-set';

export interface WatermarkOptions {
  readonly publisher: Publisher;
  /**
   * Resolves true once everything appended to the store before the call is durable (false: not yet,
   * e.g. a write failed or this replica does not lead); watermarks wait for it.
   */
  readonly durable: () => Promise<boolean>;
  /** At most one watermark per task per interval. */
  readonly intervalMs: number;
  readonly now?: () => number;
  readonly onError?: (err: unknown) => void;
}

interface Pending {
  readonly task: TaskId;
  seq: number;
  readonly seqs: SeqSet;
}

export class WatermarkPublisher implements StoredListener {
  private dirty = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private stopping = false;
  private stopped = false;
  /** Watermarks published, and flushes that waited because the store was not durable yet. */
  readonly stats = { published: 0, deferred: 0 };

  constructor(private readonly o: WatermarkOptions) {}

  stored(task: TaskId, seq: number, seqs: SeqSet): void {
    const key = taskKey(task);
    const p = this.dirty.get(key);
    if (p) p.seq = seq;
    else this.dirty.set(key, { task, seq, seqs });
    this.schedule();
  }

  forgotten(tasks: readonly TaskId[]): void {
    // A removed job's watermarks would be retained forever: clear them (an empty retained payload).
    for (const task of tasks) {
      this.dirty.delete(taskKey(task));
      this.publish(storedTopic(task), '');
    }
  }

  /** Publishes what is pending now (after any flush in flight); for shutdown and tests. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  /** A last flush, then nothing more: no timer is left to publish once the client is closed. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.flush(); // clears the timer; `schedule` sets none while stopping
    this.stopped = true;
  }

  private schedule(): void {
    // Deferred marks are not retried while stopping: the sidecars keep those records and resend them.
    if (this.timer !== null || this.stopping) return;
    this.timer = setTimeout(() => void this.flush(), this.o.intervalMs);
  }

  private async flushOnce(): Promise<void> {
    if (this.dirty.size === 0) return;
    const batch = this.dirty;
    this.dirty = new Map();
    // Ranges are read before asking for durability: they then hold only records appended before the
    // call, which is exactly what `durable()` vouches for.
    const marks = [...batch.values()].flatMap((p) => {
      const range = p.seqs.rangeOf(p.seq);
      return range === null ? [] : [{ task: p.task, range }];
    });
    let durable = false;
    try {
      durable = await this.o.durable();
    } catch (err) {
      this.o.onError?.(err);
    }
    if (!durable) {
      this.stats.deferred += 1;
      for (const [k, p] of batch) if (!this.dirty.has(k)) this.dirty.set(k, p);
      this.schedule();
      return;
    }
    const ts = (this.o.now ?? Date.now)();
    for (const { task, range } of marks) {
      const mark: StoredWatermark = { v: 1, from: range.from, through: range.through, ts };
      this.publish(storedTopic(task), JSON.stringify(mark));
      this.stats.published += 1;
    }
  }

  private publish(topic: string, payload: string): void {
    if (this.stopped) return;
    // Not awaited: the broker's ack of a watermark gates nothing here, and a broker outage must not
    // hold the flush chain; a lost watermark is superseded by the next.
    this.o.publisher.publish(topic, payload, { retain: true }).catch((err: unknown) => this.o.onError?.(err));
  }
}
