/**
 * Delivers queued records over an {@link MqttConnection} at least once, in order, until the controller
 * confirms it has stored them (ADR 0012). Records go out in batches (wire version 2: several records
 * per PUBLISH), through a bounded in-flight window (never above the broker's Receive Maximum) and a
 * token bucket that paces resends, so a long backlog never bursts into the broker's queue.
 *
 * A record passes three states: queued → acknowledged by the broker (PUBACK: frees the window) →
 * stored (a controller watermark covers its seq: only now may it leave the outbox). What the broker
 * acknowledged but the controller never confirmed is sent again: after every reconnect (the broker may
 * have lost it), when a new controller comes online, and when it has waited `resendAfterMs` (doubling
 * while nothing is confirmed). Duplicates are harmless: the controller de-duplicates on (task, seq).
 *
 * A watermark is taken only for records this process has sent (ADR 0029): one that reaches past the
 * last seq ever queued, or over a queued record not yet published, is refused and counted, and never
 * trims the outbox. Who may publish watermarks at all is the broker's to enforce (per-task ACLs).
 */
import { MAX_BATCH_RECORDS } from '../../../shared/src/schemas';
import type { OutboxEntry } from './outbox';
import { Pacer } from './pacer';

/** What the courier needs from a connection (an interface so tests can drive it without sockets). */
export interface Link {
  readonly isConnected: boolean;
  publish(
    topic: string,
    payload: string,
    packetId: number,
    flags?: { retain?: boolean; dup?: boolean },
  ): boolean;
  /** Sends what `publish` queued (the courier calls it once per batch). */
  flush(): void;
  /** Read acknowledgements now: progress waits on them. */
  pollAcks(): void;
}

export interface CourierOptions {
  topic: string;
  /** Max unacknowledged QoS 1 messages on the wire. */
  window: number;
  /** Max messages per second (token bucket; burst = min(window, rate)). */
  ratePerSec: number;
  /** Records per message: > 1 sends wire version 2 batches; 1 sends bare v1 records. */
  maxBatch: number;
  /** Resend what the broker acknowledged but no watermark confirmed after this long (then doubling). */
  resendAfterMs: number;
  /** Called with the highest seq through which everything is confirmed stored, whenever it advances. */
  onStoredThrough: (seq: number) => void;
  now: () => number;
  /** The packet id reserved for SUBSCRIBE, never used for a publish. */
  reservedPacketId?: number;
  /**
   * The highest seq numbered before this process started (its saved `nextSeq` − 1): the ceiling of
   * a watermark until records above it are queued. Default −1.
   */
  numberedThrough?: number;
}

/** What became of a watermark. */
export type WatermarkOutcome = 'accepted' | 'refused';

interface Slot {
  entry: OutboxEntry;
  /** A watermark covered it: done. */
  stored: boolean;
  /** The broker acknowledged it in the current session. */
  acked: boolean;
  /** Published at least once (later sends carry the DUP flag). */
  sent: boolean;
  inflight: boolean;
  ackedAt: number;
}

type Inflight = { kind: 'records'; slots: Slot[] } | { kind: 'control'; done: (ok: boolean) => void };

/** Bytes of record JSON per batch message (the broker's limit is 64 KiB). */
const MAX_BATCH_BYTES = 48 * 1024;
const MAX_RESEND_BACKOFF = 16;

export class Courier {
  private queue: Slot[] = [];
  private head = 0;
  private cursor = 0;
  private inflight = new Map<number, Inflight>();
  private nextId = 1;
  private window: number;
  private readonly pacer: Pacer;
  private pumpTimer: NodeJS.Timeout | null = null;
  private resendTimer: NodeJS.Timeout | null = null;
  private backoff = 1;
  private link: Link | null = null;
  private unstored = 0;
  private notAcked = 0;
  private controlsInFlight = 0;
  private controllerOnline = true;
  /** The highest seq ever queued (or numbered before this process started). */
  private queuedThrough: number;
  /** Times unconfirmed records were sent again (for logs and tests). */
  resends = 0;
  /** Watermarks refused: beyond what this process sent (ADR 0029). */
  refusedWatermarks = 0;

  constructor(private readonly opts: CourierOptions) {
    this.window = opts.window;
    this.queuedThrough = opts.numberedThrough ?? -1;
    this.pacer = new Pacer(opts.ratePerSec, opts.now, this.capacity());
  }

  /**
   * True while acknowledgements gate progress: queued records wait for room in the window or a
   * control message (status) waits for its acknowledgement.
   */
  get needsAcks(): boolean {
    return this.controlsInFlight > 0 || this.cursor < this.queue.length;
  }

  /**
   * True once half the in-flight window awaits acknowledgement: time to read them, before the window
   * fills and sending stalls. Below that they may wait to be read in a batch.
   */
  get acksWanted(): boolean {
    return this.inflight.size * 2 >= this.window;
  }

  /** Records not yet confirmed stored by the controller (they stay in the outbox). */
  get pendingCount(): number {
    return this.unstored;
  }

  /** Records the broker has not acknowledged yet (in this session). */
  get unacknowledgedCount(): number {
    return this.notAcked;
  }

  /** The unconfirmed entries, in order (for the disk outbox rewrite). */
  pendingEntries(): OutboxEntry[] {
    const out: OutboxEntry[] = [];
    for (let i = this.head; i < this.queue.length; i++) {
      const s = this.queue[i] as Slot;
      if (!s.stored) out.push(s.entry);
    }
    return out;
  }

  attach(link: Link): void {
    this.link = link;
  }

  /** Queues entries in order and sends what the window allows, in one write. */
  enqueueAll(entries: readonly OutboxEntry[]): void {
    if (entries.length === 0) return;
    for (const entry of entries) {
      this.queue.push({ entry, stored: false, acked: false, sent: false, inflight: false, ackedAt: 0 });
      if (entry.seq > this.queuedThrough) this.queuedThrough = entry.seq;
    }
    this.unstored += entries.length;
    this.notAcked += entries.length;
    this.pump();
  }

  /** A new session: whatever was in flight is lost with the old one, and anything unconfirmed goes again. */
  onConnect(receiveMaximum: number | null): void {
    this.window = Math.max(1, Math.min(this.opts.window, receiveMaximum ?? Infinity));
    this.dropInflight();
    this.unackAll();
    this.pump();
  }

  onDisconnect(): void {
    this.dropInflight();
  }

  /** The controller's retained status: a controller that (re)starts gets everything unconfirmed again. */
  onControllerStatus(online: boolean, changed: boolean): void {
    this.controllerOnline = online;
    if (!online) return;
    if (changed) {
      this.backoff = 1;
      this.resendUnstored();
    } else this.armResend();
  }

  /**
   * A watermark: every seq in [from, through] is stored. Refused (and counted) when it covers a seq
   * this process never queued, or a queued record it has not published yet: the controller cannot
   * have stored what was never sent, so such a watermark is forged or confused, and it must not let
   * records go.
   */
  onStored(from: number, through: number): WatermarkOutcome {
    const first = this.firstAtOrAfter(from);
    if (through > this.queuedThrough || this.unsentWithin(first, through)) {
      this.refusedWatermarks++;
      return 'refused';
    }
    let i = first;
    let progress = false;
    for (; i < this.queue.length; i++) {
      const s = this.queue[i] as Slot;
      if (s.entry.seq > through) break;
      if (s.stored) continue;
      s.stored = true;
      this.unstored--;
      if (!s.acked) this.notAcked--;
      progress = true;
    }
    if (!progress) return 'accepted';
    this.backoff = 1;
    this.advanceHead();
    return 'accepted';
  }

  /** Publishes a retained control message (status) outside the record queue; resolves with success. */
  async sendControl(topic: string, payload: string): Promise<boolean> {
    const link = this.link;
    if (link === null || !link.isConnected) return false;
    const id = this.allocateId();
    return new Promise<boolean>((resolve) => {
      this.controlsInFlight++;
      const done = (ok: boolean): void => {
        this.controlsInFlight--;
        resolve(ok);
      };
      this.inflight.set(id, { kind: 'control', done });
      if (!link.publish(topic, payload, id, { retain: true })) {
        this.inflight.delete(id);
        done(false);
        return;
      }
      link.flush();
      link.pollAcks();
    });
  }

  onAck(packetId: number, ok: boolean): void {
    const f = this.inflight.get(packetId);
    if (f === undefined) return;
    this.inflight.delete(packetId);
    if (f.kind === 'control') {
      f.done(ok);
      return;
    }
    const now = this.opts.now();
    for (const s of f.slots) {
      s.inflight = false;
      // A refused message (MQTT 5 reason ≥ 0x80) stays unacknowledged and goes again on the next session.
      if (!ok || s.stored || s.acked) continue;
      s.acked = true;
      s.ackedAt = now;
      this.notAcked--;
    }
    this.armResend();
    this.pump();
  }

  /** Sends as much as the window and the token bucket allow. */
  pump(): void {
    const link = this.link;
    if (link === null || !link.isConnected) return;
    this.pacer.refill(this.capacity());
    while (this.inflight.size < this.window && this.skipToSendable()) {
      if (!this.pacer.take()) {
        this.schedulePump();
        break;
      }
      const batch = this.nextBatch();
      const id = this.allocateId();
      this.inflight.set(id, { kind: 'records', slots: batch });
      link.publish(this.opts.topic, this.payloadOf(batch), id, { dup: batch.some((s) => s.sent) });
      for (const s of batch) [s.sent, s.inflight] = [true, true];
    }
    link.flush();
    if (this.cursor < this.queue.length) link.pollAcks(); // the window or the pace holds records back
  }

  /** Stops timers (the process is about to exit). */
  stop(): void {
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    if (this.resendTimer) clearTimeout(this.resendTimer);
    this.pumpTimer = this.resendTimer = null;
  }

  /** Moves the cursor past records that need no sending; true when one does. */
  private skipToSendable(): boolean {
    while (this.cursor < this.queue.length) {
      const s = this.queue[this.cursor] as Slot;
      if (!s.stored && !s.acked && !s.inflight) return true;
      this.cursor++;
    }
    return false;
  }

  /** The next records to send, in queue order, from the cursor (which it advances). */
  private nextBatch(): Slot[] {
    const batch: Slot[] = [];
    let bytes = 0;
    const max = Math.min(this.opts.maxBatch, MAX_BATCH_RECORDS);
    while (this.cursor < this.queue.length && batch.length < max) {
      const s = this.queue[this.cursor] as Slot;
      if (s.stored || s.acked || s.inflight) {
        this.cursor++;
        continue;
      }
      const size = s.entry.payload.length + 1;
      if (batch.length > 0 && bytes + size > MAX_BATCH_BYTES) break;
      batch.push(s);
      bytes += size;
      this.cursor++;
    }
    return batch;
  }

  /** Wire v2 (a batch) by default; a bare v1 record when batching is off. */
  private payloadOf(batch: readonly Slot[]): string {
    if (this.opts.maxBatch <= 1) return (batch[0] as Slot).entry.payload;
    let body = '';
    for (const s of batch) body += body === '' ? s.entry.payload : `,${s.entry.payload}`;
    return `{"v":2,"records":[${body}]}`;
  }

  /** Every unconfirmed record the broker acknowledged goes again (from the oldest). */
  private resendUnstored(): void {
    this.unackAll();
    this.resends++;
    this.pump();
  }

  private unackAll(): void {
    for (let i = this.head; i < this.queue.length; i++) {
      const s = this.queue[i] as Slot;
      if (s.stored || !s.acked || s.inflight) continue;
      s.acked = false;
      this.notAcked++;
    }
    this.cursor = this.head;
  }

  private dropInflight(): void {
    for (const f of this.inflight.values()) {
      if (f.kind === 'control') f.done(false);
      else for (const s of f.slots) s.inflight = false;
    }
    this.inflight.clear();
    this.cursor = this.head;
  }

  /** Arms the timer that resends what waited too long for a watermark (only while the controller is online). */
  private armResend(): void {
    if (this.resendTimer !== null || !this.controllerOnline) return;
    const oldest = this.oldestAckedUnstored();
    if (oldest === null) return;
    const due = oldest + this.opts.resendAfterMs * this.backoff;
    this.resendTimer = setTimeout(
      () => {
        this.resendTimer = null;
        const first = this.oldestAckedUnstored();
        if (first === null || !this.controllerOnline) return;
        if (this.opts.now() >= first + this.opts.resendAfterMs * this.backoff) {
          this.backoff = Math.min(MAX_RESEND_BACKOFF, this.backoff * 2);
          this.resendUnstored();
        }
        this.armResend();
      },
      Math.max(1, due - this.opts.now()),
    );
  }

  private oldestAckedUnstored(): number | null {
    for (let i = this.head; i < this.queue.length; i++) {
      const s = this.queue[i] as Slot;
      if (!s.stored && s.acked) return s.ackedAt;
    }
    return null;
  }

  /** Index of the first queued slot with seq ≥ `seq` (slots are in seq order). */
  private firstAtOrAfter(seq: number): number {
    let lo = this.head;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.queue[mid] as Slot).entry.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** True when a queued record from index `i` up to seq `through` has never been published. */
  private unsentWithin(i: number, through: number): boolean {
    for (; i < this.queue.length; i++) {
      const s = this.queue[i] as Slot;
      if (s.entry.seq > through) return false;
      if (!s.sent && !s.stored) return true;
    }
    return false;
  }

  /** Burst size: the in-flight window, but never more than one second's worth of the rate. */
  private capacity(): number {
    return Math.max(1, Math.min(this.window, this.opts.ratePerSec));
  }

  private schedulePump(): void {
    if (this.pumpTimer !== null) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pump();
    }, this.pacer.msUntilNext());
  }

  private allocateId(): number {
    for (;;) {
      const id = this.nextId;
      this.nextId = id >= 65535 ? 1 : id + 1;
      if (id !== this.opts.reservedPacketId && !this.inflight.has(id)) return id;
    }
  }

  private advanceHead(): void {
    const before = this.head;
    while (this.head < this.queue.length && (this.queue[this.head] as Slot).stored) this.head++;
    if (this.head === before) return;
    this.cursor = Math.max(this.cursor, this.head);
    this.opts.onStoredThrough((this.queue[this.head - 1] as Slot).entry.seq);
    if (this.head > 1024 || this.head === this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.cursor -= this.head;
      this.head = 0;
    }
  }
}
