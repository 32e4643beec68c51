import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Courier, type Link } from './courier';

interface Sent {
  id: number;
  payload: string;
  dup: boolean;
  retain: boolean;
}

/** A link that records publishes; `connected` toggles like a socket would. */
function fakeLink(): Link & { sent: Sent[]; connected: boolean; polls: number; flushes: number } {
  const link = {
    sent: [] as Sent[],
    connected: true,
    polls: 0,
    pollAcks() {
      link.polls++;
    },
    flushes: 0,
    flush() {
      link.flushes++;
    },
    get isConnected() {
      return link.connected;
    },
    publish(_topic: string, payload: string, id: number, flags: { retain?: boolean; dup?: boolean } = {}) {
      if (!link.connected) return false;
      link.sent.push({ id, payload, dup: flags.dup === true, retain: flags.retain === true });
      return true;
    },
  };
  return link;
}

const entry = (seq: number) => ({ seq, ino: 1, pos: seq * 10, payload: `r${seq}` });

const v2 = (...payloads: string[]): string => `{"v":2,"records":[${payloads.join(',')}]}`;

describe('Courier', () => {
  let now = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    now = 0;
  });
  afterEach(() => vi.useRealTimers());

  const make = (o: { window?: number; rate?: number; batch?: number; resendAfterMs?: number } = {}) => {
    const stored: number[] = [];
    const c = new Courier({
      topic: 't',
      window: o.window ?? 4,
      ratePerSec: o.rate ?? 1000,
      maxBatch: o.batch ?? 1,
      resendAfterMs: o.resendAfterMs ?? 10_000,
      reservedPacketId: 65535,
      now: () => now,
      onStoredThrough: (s) => stored.push(s),
    });
    const link = fakeLink();
    c.attach(link);
    return { c, link, stored };
  };
  const ackAll = (c: Courier, link: ReturnType<typeof fakeLink>): void => {
    for (const s of [...link.sent]) c.onAck(s.id, true);
  };

  it('keeps at most `window` messages in flight and sends in order', () => {
    const { c, link } = make({ window: 2 });
    for (let s = 0; s < 5; s++) c.enqueueAll([entry(s)]);
    expect(link.sent.map((x) => x.payload)).toEqual(['r0', 'r1']);
    c.onAck(link.sent[0]!.id, true);
    now += 1; // one token
    vi.advanceTimersByTime(1);
    expect(link.sent.map((x) => x.payload)).toEqual(['r0', 'r1', 'r2']);
    // Acknowledged by the broker is not confirmed by the controller: all five stay pending.
    expect([c.pendingCount, c.unacknowledgedCount]).toEqual([5, 4]);
  });

  it('batches consecutive records into one v2 message', () => {
    const { c, link } = make({ window: 2, batch: 3 });
    c.enqueueAll([entry(0), entry(1), entry(2), entry(3), entry(4), entry(5), entry(6)]);
    expect(link.sent.map((x) => x.payload)).toEqual([v2('r0', 'r1', 'r2'), v2('r3', 'r4', 'r5')]);
    c.onAck(link.sent[0]!.id, true);
    now += 1; // one token
    vi.advanceTimersByTime(1);
    expect(link.sent.at(-1)?.payload).toBe(v2('r6'));
    expect(c.unacknowledgedCount).toBe(4);
  });

  it('forgets records only when a watermark covers them, and reports the confirmed prefix', () => {
    const { c, link, stored } = make({ window: 10 });
    c.enqueueAll([entry(0), entry(1), entry(2), entry(3)]);
    ackAll(c, link);
    expect(c.pendingCount).toBe(4);
    c.onStored(1, 2); // a gap at 0: nothing leaves yet
    expect(stored).toEqual([]);
    expect(c.pendingEntries().map((e) => e.seq)).toEqual([0, 3]);
    c.onStored(0, 0);
    expect(stored).toEqual([2]);
    c.onStored(0, 3);
    expect(stored).toEqual([2, 3]);
    expect(c.pendingCount).toBe(0);
  });

  it('refuses and counts a watermark beyond what it sent; it never trims the outbox (ADR 0029)', () => {
    const { c, link, stored } = make({ window: 2 });
    c.enqueueAll([entry(0), entry(1), entry(2), entry(3)]); // 2 and 3 wait for room in the window
    ackAll(c, link);
    link.sent.length = 0;
    expect(c.onStored(0, 9)).toBe('refused'); // seqs never queued
    expect(c.onStored(2, 3)).toBe('refused'); // queued, not yet published
    expect(c.onStored(0, 2)).toBe('refused'); // reaches one record not yet published
    expect([c.refusedWatermarks, c.pendingCount, stored]).toEqual([3, 4, []]);
    expect(c.onStored(0, 1)).toBe('accepted');
    expect([c.pendingCount, stored]).toEqual([2, [1]]);
  });

  it('takes a watermark for records numbered before it started (a restart resends them)', () => {
    const stored: number[] = [];
    const c = new Courier({
      topic: 't',
      window: 4,
      ratePerSec: 1000,
      maxBatch: 1,
      resendAfterMs: 10_000,
      now: () => now,
      numberedThrough: 41,
      onStoredThrough: (s) => stored.push(s),
    });
    const link = fakeLink();
    c.attach(link);
    c.enqueueAll([entry(40), entry(41)]);
    expect(c.onStored(0, 39)).toBe('accepted'); // a predecessor's records: nothing here to trim
    expect(c.onStored(0, 41)).toBe('accepted');
    expect(stored).toEqual([41]);
    expect(c.onStored(0, 42)).toBe('refused');
  });

  it('sends a batch in one flush and asks for acknowledgements only when they gate progress', () => {
    const { c, link } = make({ window: 4 });
    c.enqueueAll([entry(0)]);
    expect([link.flushes, link.polls, c.needsAcks, c.acksWanted]).toEqual([1, 0, false, false]);
    c.enqueueAll([entry(1), entry(2), entry(3), entry(4)]);
    // One flush for the batch; the window is full with a record still queued: read acks now.
    expect(link.flushes).toBe(2);
    expect(link.sent).toHaveLength(4);
    expect([link.polls, c.needsAcks, c.acksWanted]).toEqual([1, true, true]);
    ackAll(c, link);
    now += 1; // one token
    vi.advanceTimersByTime(1);
    expect(link.sent).toHaveLength(5);
    expect([c.needsAcks, c.acksWanted]).toEqual([false, false]);
  });

  it('asks for the acknowledgement of a control message at once', async () => {
    const { c, link } = make();
    const done = c.sendControl('status', 'online');
    expect([link.polls, c.needsAcks]).toEqual([1, true]);
    c.onAck(link.sent[0]!.id, true);
    await expect(done).resolves.toBe(true);
    expect(c.needsAcks).toBe(false);
  });

  it('resends everything unconfirmed, in order and flagged dup, after a reconnect', () => {
    const { c, link } = make({ window: 10 });
    for (let s = 0; s < 4; s++) c.enqueueAll([entry(s)]);
    c.onAck(link.sent[0]!.id, true);
    c.onAck(link.sent[1]!.id, true);
    c.onStored(0, 0);
    link.connected = false;
    c.onDisconnect();
    c.enqueueAll([entry(4)]);
    link.connected = true;
    link.sent.length = 0;
    c.onConnect(null);
    // seq 1 was acknowledged by the broker but never confirmed: the broker may have lost it.
    expect(link.sent.map((x) => [x.payload, x.dup])).toEqual([
      ['r1', true],
      ['r2', true],
      ['r3', true],
      ['r4', false],
    ]);
  });

  it('resends what waited too long for a watermark, backing off while nothing is confirmed', () => {
    const { c, link } = make({ window: 10, resendAfterMs: 1000 });
    c.enqueueAll([entry(0), entry(1)]);
    ackAll(c, link);
    link.sent.length = 0;
    now = 999;
    vi.advanceTimersByTime(999);
    expect(link.sent).toHaveLength(0);
    now = 1000;
    vi.advanceTimersByTime(1);
    expect(link.sent.map((x) => x.payload)).toEqual(['r0', 'r1']);
    ackAll(c, link);
    link.sent.length = 0;
    now += 1000;
    vi.advanceTimersByTime(1000);
    expect(link.sent).toHaveLength(0); // doubled: 2 s now
    now += 1000;
    vi.advanceTimersByTime(1000);
    expect(link.sent).toHaveLength(2);
    expect(c.resends).toBe(2);
  });

  it('does not resend while the controller is offline, and resends at once when a new one comes online', () => {
    const { c, link } = make({ window: 10, resendAfterMs: 1000 });
    c.onControllerStatus(false, false);
    c.enqueueAll([entry(0)]);
    ackAll(c, link);
    link.sent.length = 0;
    now += 60_000;
    vi.advanceTimersByTime(60_000);
    expect(link.sent).toHaveLength(0);
    c.onControllerStatus(true, true);
    expect(link.sent.map((x) => x.payload)).toEqual(['r0']);
  });

  it('honours the broker Receive Maximum', () => {
    const { c, link } = make({ window: 10 });
    link.connected = false;
    for (let s = 0; s < 5; s++) c.enqueueAll([entry(s)]);
    link.connected = true;
    c.onConnect(2);
    expect(link.sent).toHaveLength(2);
  });

  it('paces a backlog with the token bucket', () => {
    const { c, link } = make({ window: 100, rate: 10 });
    link.connected = false;
    for (let s = 0; s < 50; s++) c.enqueueAll([entry(s)]);
    link.connected = true;
    c.onConnect(null);
    ackAll(c, link);
    const first = link.sent.length;
    expect(first).toBeLessThanOrEqual(10);
    now += 1000;
    vi.advanceTimersByTime(1000);
    expect(link.sent.length - first).toBeLessThanOrEqual(11);
    expect(link.sent.length).toBeGreaterThan(first);
  });

  it('keeps a refused message (MQTT 5 reason ≥ 0x80) for the next session', () => {
    const { c, link } = make();
    c.enqueueAll([entry(0)]);
    c.onAck(link.sent[0]!.id, false);
    expect([c.pendingCount, c.unacknowledgedCount]).toEqual([1, 1]);
  });

  it('never gives a publish the packet id reserved for SUBSCRIBE', () => {
    const { c, link } = make({ window: 1 });
    for (let s = 0; s < 70_000; s++) {
      c.enqueueAll([entry(s)]);
      c.onAck(link.sent.at(-1)!.id, true);
      c.onStored(s, s);
    }
    expect(link.sent.some((x) => x.id === 65535)).toBe(false);
  });

  it('sends retained control messages and resolves on their PUBACK', async () => {
    const { c, link } = make();
    const done = c.sendControl('s', 'online');
    expect(link.sent[0]).toMatchObject({ payload: 'online', retain: true });
    c.onAck(link.sent[0]!.id, true);
    await expect(done).resolves.toBe(true);
    const lost = c.sendControl('s', 'done');
    c.onDisconnect();
    await expect(lost).resolves.toBe(false);
  });
});
