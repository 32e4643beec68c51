/**
 * Delivers queued records over an {@link MqttConnection} at least once, in order: a bounded in-flight
 * window (never above the broker's Receive Maximum) and a token bucket pace resends after a reconnect,
 * so a long backlog never bursts into the broker's queue.
 */
import type { OutboxEntry } from './outbox';

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
  /** Called with the highest seq below which everything is acknowledged, whenever it advances. */
  onAckedThrough: (seq: number) => void;
  now: () => number;
}

interface Slot {
  entry: OutboxEntry;
  acked: boolean;
  sent: boolean;
}

type Inflight = { kind: 'record'; slot: Slot } | { kind: 'control'; done: (ok: boolean) => void };

export class Courier {
  private queue: Slot[] = [];
  private head = 0;
  private cursor = 0;
  private inflight = new Map<number, Inflight>();
  private nextId = 1;
  private window: number;
  private tokens: number;
  private lastRefill: number;
  private timer: NodeJS.Timeout | null = null;
  private link: Link | null = null;

  constructor(private readonly opts: CourierOptions) {
    this.window = opts.window;
    this.tokens = this.capacity();
    this.lastRefill = opts.now();
  }

  private unacked = 0;
  private controlsInFlight = 0;
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

  /** Records not yet acknowledged. */
  get pendingCount(): number {
    return this.unacked;
  }

  /** The unacknowledged entries, in order (for the disk outbox rewrite). */
  pendingEntries(): OutboxEntry[] {
    return this.queue
      .slice(this.head)
      .filter((s) => !s.acked)
      .map((s) => s.entry);
  }

  attach(link: Link): void {
    this.link = link;
  }

  /** Queues entries in order and sends what the window allows, in one write. */
  enqueueAll(entries: readonly OutboxEntry[]): void {
    if (entries.length === 0) return;
    for (const entry of entries) this.queue.push({ entry, acked: false, sent: false });
    this.unacked += entries.length;
    this.pump();
  }

  /** A new session: whatever was in flight is lost with the old one and goes again, in order. */
  onConnect(receiveMaximum: number | null): void {
    this.window = Math.max(1, Math.min(this.opts.window, receiveMaximum ?? Infinity));
    for (const f of this.inflight.values()) if (f.kind === 'control') f.done(false);
    this.inflight.clear();
    this.cursor = this.head;
    this.pump();
  }

  onDisconnect(): void {
    for (const f of this.inflight.values()) if (f.kind === 'control') f.done(false);
    this.inflight.clear();
    this.cursor = this.head;
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
    // A refused message (MQTT 5 reason ≥ 0x80) stays queued and goes again on the next session.
    if (ok && !f.slot.acked) {
      f.slot.acked = true;
      this.unacked--;
    }
    this.advanceHead();
    this.pump();
  }

  /** Sends as much as the window and the token bucket allow. */
  pump(): void {
    const link = this.link;
    if (link === null || !link.isConnected) return;
    this.refill();
    while (this.cursor < this.queue.length && this.inflight.size < this.window) {
      const slot = this.queue[this.cursor] as Slot;
      if (slot.acked) {
        this.cursor++;
        continue;
      }
      if (this.tokens < 1) {
        this.schedulePump();
        break;
      }
      const id = this.allocateId();
      this.inflight.set(id, { kind: 'record', slot });
      link.publish(this.opts.topic, slot.entry.payload, id, { dup: slot.sent });
      slot.sent = true;
      this.tokens--;
      this.cursor++;
    }
    link.flush();
    if (this.cursor < this.queue.length) link.pollAcks(); // the window or the pace holds records back
  }

  /** Burst size: the in-flight window, but never more than one second's worth of the rate. */
  private capacity(): number {
    return Math.max(1, Math.min(this.window, this.opts.ratePerSec));
  }

  private schedulePump(): void {
    if (this.timer !== null) return;
    const wait = Math.ceil(((1 - this.tokens) / this.opts.ratePerSec) * 1000);
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(1, wait),
    );
  }

  private refill(): void {
    const now = this.opts.now();
    this.tokens = Math.min(
      this.capacity(),
      this.tokens + ((now - this.lastRefill) / 1000) * this.opts.ratePerSec,
    );
    this.lastRefill = now;
  }

  private allocateId(): number {
    for (;;) {
      const id = this.nextId;
      this.nextId = id >= 65535 ? 1 : id + 1;
      if (!this.inflight.has(id)) return id;
    }
  }

  private advanceHead(): void {
    const before = this.head;
    while (this.head < this.queue.length && (this.queue[this.head] as Slot).acked) this.head++;
    if (this.head === before) return;
    this.opts.onAckedThrough((this.queue[this.head - 1] as Slot).entry.seq);
    if (this.head > 1024 || this.head === this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.cursor -= this.head;
      this.head = 0;
    }
  }
}
