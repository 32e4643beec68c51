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

describe('Courier', () => {
  let now = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    now = 0;
  });
  afterEach(() => vi.useRealTimers());

  const make = (o: { window?: number; rate?: number } = {}) => {
    const acked: number[] = [];
    const c = new Courier({
      topic: 't',
      window: o.window ?? 4,
      ratePerSec: o.rate ?? 1000,
      now: () => now,
      onAckedThrough: (s) => acked.push(s),
    });
    const link = fakeLink();
    c.attach(link);
    return { c, link, acked };
  };

  it('keeps at most `window` messages in flight and sends in order', () => {
    const { c, link } = make({ window: 2 });
    for (let s = 0; s < 5; s++) c.enqueueAll([entry(s)]);
    expect(link.sent.map((x) => x.payload)).toEqual(['r0', 'r1']);
    c.onAck(link.sent[0]!.id, true);
    now += 1; // one token
    vi.advanceTimersByTime(1);
    expect(link.sent.map((x) => x.payload)).toEqual(['r0', 'r1', 'r2']);
    expect(c.pendingCount).toBe(4);
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
    for (const s of [...link.sent]) c.onAck(s.id, true);
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

  it('reports the acknowledged prefix even when acks come out of order', () => {
    const { c, link, acked } = make();
    for (let s = 0; s < 3; s++) c.enqueueAll([entry(s)]);
    c.onAck(link.sent[1]!.id, true);
    expect(acked).toEqual([]);
    c.onAck(link.sent[0]!.id, true);
    expect(acked).toEqual([1]);
    expect(c.pendingEntries().map((e) => e.seq)).toEqual([2]);
  });

  it('resends everything unacknowledged, in order and flagged dup, after a reconnect', () => {
    const { c, link } = make({ window: 10 });
    for (let s = 0; s < 3; s++) c.enqueueAll([entry(s)]);
    c.onAck(link.sent[0]!.id, true);
    link.connected = false;
    c.onDisconnect();
    c.enqueueAll([entry(3)]);
    link.connected = true;
    link.sent.length = 0;
    c.onConnect(null);
    expect(link.sent.map((x) => [x.payload, x.dup])).toEqual([
      ['r1', true],
      ['r2', true],
      ['r3', false],
    ]);
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
    for (const s of link.sent) c.onAck(s.id, true);
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
    expect(c.pendingCount).toBe(1);
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
