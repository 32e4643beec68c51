import type { EventsV1Event } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EventRecorderOptions, EventSubject, JobEvent } from './events';
import { Registry } from 'prom-client';
import { EVENT_REASON, EventRecorder, NO_EVENTS, registerEventMetrics, shapeText } from './events';

const T0 = Date.UTC(2026, 10, 29, 22, 0, 0, 123);

const job = (name = 'resnet', uid = `uid-${name}`): EventSubject => ({
  metadata: { name, namespace: 'team-a', uid, resourceVersion: '42' },
});
const started = (note = 'started with 1 PS / 2 workers on n1'): JobEvent => ({
  type: 'Normal',
  reason: EVENT_REASON.Started,
  action: 'Start',
  note,
});

/** A recorder over an in-memory writer; `clock.ms` is its time. */
function recorder(o: Partial<EventRecorderOptions> = {}) {
  const written: { namespace: string; body: EventsV1Event }[] = [];
  const errors: unknown[] = [];
  const clock = { ms: T0 };
  const r = new EventRecorder({
    write: (namespace, body) => {
      written.push({ namespace, body });
      return Promise.resolve();
    },
    reportingInstance: 'controller-0',
    now: () => clock.ms,
    onError: (err) => errors.push(err),
    ...o,
  });
  return { r, written, errors, clock };
}

describe('EventRecorder', () => {
  it('writes an events.k8s.io/v1 Event about the job, with a microsecond eventTime on the wire', async () => {
    const { r, written } = recorder();
    r.emit(job(), started());
    await r.idle();
    expect(written).toHaveLength(1);
    const { namespace, body } = written[0]!;
    expect(namespace).toBe('team-a');
    expect(body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'team-a' },
      type: 'Normal',
      reason: 'Started',
      action: 'Start',
      note: 'started with 1 PS / 2 workers on n1',
      regarding: {
        apiVersion: 'optimus.dev/v1alpha2',
        kind: 'OptimusJob',
        name: 'resnet',
        namespace: 'team-a',
        uid: 'uid-resnet',
        resourceVersion: '42',
      },
      reportingController: 'optimus.dev/controller',
      reportingInstance: 'controller-0',
    });
    expect(body.metadata?.name).toMatch(/^resnet\.[0-9a-f]+$/);
    expect(JSON.parse(JSON.stringify(body)).eventTime).toBe('2026-11-29T22:00:00.123000Z');
    expect(r.stats).toEqual({ sent: 1, failed: 0, deduplicated: 0, dropped: 0 });
  });

  it.each([
    {
      name: 'same job, reason and note within the window',
      second: started(),
      job2: job(),
      afterMs: 60_000,
      sent: 1,
    },
    { name: 'the same event after the window', second: started(), job2: job(), afterMs: 600_000, sent: 2 },
    {
      name: 'another note',
      second: started('resumed with 2 PS / 2 workers on n1'),
      job2: job(),
      afterMs: 0,
      sent: 2,
    },
    {
      name: 'another reason',
      second: { ...started(), reason: EVENT_REASON.Resized },
      job2: job(),
      afterMs: 0,
      sent: 2,
    },
    {
      name: 'a re-created job of the same name (new uid)',
      second: started(),
      job2: job('resnet', 'uid-2'),
      afterMs: 0,
      sent: 2,
    },
  ])('de-dup: $name → $sent write(s)', async ({ second, job2, afterMs, sent }) => {
    const { r, written, clock } = recorder();
    r.emit(job(), started());
    clock.ms += afterMs;
    r.emit(job2, second);
    await r.idle();
    expect(written).toHaveLength(sent);
    expect(r.stats.deduplicated).toBe(2 - sent);
  });

  it('gives every event of one millisecond its own name', async () => {
    const { r, written } = recorder();
    for (let i = 0; i < 5; i++) r.emit(job(), started(`note ${i}`));
    await r.idle();
    expect(new Set(written.map((w) => w.body.metadata?.name)).size).toBe(5);
  });

  it('counts a failed write, reports it, never throws, and lets the next occurrence retry', async () => {
    let fail = true;
    const { r, errors } = recorder({
      write: () => (fail ? Promise.reject(new Error('HTTP 500')) : Promise.resolve()),
    });
    expect(() => r.emit(job(), started())).not.toThrow();
    await r.idle();
    expect(r.stats).toMatchObject({ sent: 0, failed: 1 });
    expect(errors.map(String)).toEqual(['Error: HTTP 500']);
    fail = false;
    r.emit(job(), started()); // not de-duplicated: the first one never arrived
    await r.idle();
    expect(r.stats).toMatchObject({ sent: 1, failed: 1, deduplicated: 0 });
  });

  it('survives a writer that throws synchronously', async () => {
    const { r } = recorder({
      write: () => {
        throw new Error('no client');
      },
    });
    expect(() => r.emit(job(), started())).not.toThrow();
    await r.idle();
    expect(r.stats.failed).toBe(1);
  });

  it('returns at once while the API hangs, and drops what exceeds maxInFlight', async () => {
    const { r } = recorder({ write: () => new Promise(() => undefined), maxInFlight: 2 });
    for (let i = 0; i < 5; i++) r.emit(job(), started(`note ${i}`));
    expect(r.stats).toMatchObject({ sent: 0, dropped: 3 });
    const t = Date.now();
    await r.idle(50); // bounded: a hung write does not hold a shutdown
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it('remembers at most maxRemembered keys, forgetting the oldest', async () => {
    const { r, written } = recorder({ maxRemembered: 2 });
    for (const n of ['a', 'b', 'c', 'a']) r.emit(job(), started(n));
    await r.idle();
    expect(written.map((w) => w.body.note)).toEqual(['a', 'b', 'c', 'a']); // 'a' was forgotten
  });

  it('cuts a note to the API limit of 1024 bytes', async () => {
    const { r, written } = recorder();
    r.emit(job(), started('é'.repeat(2000)));
    await r.idle();
    const note = written[0]?.body.note ?? '';
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(note.endsWith('…')).toBe(true);
  });
});

describe('registerEventMetrics', () => {
  it('exposes sent, failed and de-duplicated events as a Prometheus counter', async () => {
    let fail = false;
    const { r } = recorder({
      write: () => (fail ? Promise.reject(new Error('500')) : Promise.resolve()),
    });
    const registry = new Registry();
    registerEventMetrics(registry, r);
    r.emit(job(), started());
    r.emit(job(), started());
    await r.idle();
    fail = true;
    r.emit(job('other'), started());
    await r.idle();
    const text = await registry.metrics();
    expect(text).toContain('optimus_kubernetes_events_total{result="sent"} 1');
    expect(text).toContain('optimus_kubernetes_events_total{result="deduplicated"} 1');
    expect(text).toContain('optimus_kubernetes_events_total{result="failed"} 1');
  });

  it('registers nothing for a sink that keeps no counts', async () => {
    const registry = new Registry();
    registerEventMetrics(registry, NO_EVENTS);
    expect(await registry.metrics()).not.toContain('optimus_kubernetes_events_total');
  });
});

describe('shapeText', () => {
  it.each([
    { shape: { ps: 2, workers: 4 }, text: '2 PS / 4 workers' },
    { shape: { ps: 1, workers: 1 }, text: '1 PS / 1 worker' },
  ])('$text', ({ shape, text }) => expect(shapeText(shape)).toBe(text));
});
