import { ApiException, CoreV1Api, EventsV1Api, V1MicroTime } from '@kubernetes/client-node';
import type { EventsV1Event } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import type { ApiDouble } from './server';
import { startApiDouble } from './server';

const codeOf = async (p: Promise<unknown>): Promise<number> => {
  try {
    await p;
    return 201;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
};

const event = (over: Partial<EventsV1Event> = {}): EventsV1Event => ({
  metadata: { name: 'j.1' },
  eventTime: new V1MicroTime(Date.UTC(2026, 0, 1)),
  type: 'Normal',
  reason: 'Started',
  action: 'Start',
  note: 'started',
  regarding: {
    apiVersion: 'optimus.dev/v1alpha2',
    kind: 'OptimusJob',
    name: 'j',
    namespace: 'default',
    uid: 'u',
  },
  reportingController: 'optimus.dev/controller',
  reportingInstance: 'controller-0',
  ...over,
});

describe('API double: events.k8s.io/v1 Events', () => {
  let double: ApiDouble;
  let events: EventsV1Api;
  beforeEach(async () => {
    double = await startApiDouble();
    events = kubeConfigFor(double.url).makeApiClient(EventsV1Api);
  });
  afterEach(() => double.close());

  it('stores a valid Event and lists it', async () => {
    await events.createNamespacedEvent({ namespace: 'default', body: event() });
    const list = await events.listNamespacedEvent({ namespace: 'default' });
    expect(list.items.map((e) => [e.metadata?.name, e.reason, e.regarding?.uid])).toEqual([
      ['j.1', 'Started', 'u'],
    ]);
    expect(list.items[0]?.eventTime).toBe('2026-01-01T00:00:00.000000Z');
  });

  it.each([
    { name: 'no reason', body: event({ reason: '' }) },
    { name: 'no reportingController', body: event({ reportingController: '' }) },
    { name: 'no action', body: event({ action: '' }) },
    { name: 'a type other than Normal/Warning', body: event({ type: 'Error' }) },
    { name: 'a note over 1024 bytes', body: event({ note: 'x'.repeat(1025) }) },
    { name: 'no regarding', body: event({ regarding: {} }) },
  ])('rejects an Event with $name (422)', async ({ body }) => {
    expect(await codeOf(events.createNamespacedEvent({ namespace: 'default', body: body }))).toBe(422);
  });

  it.each([
    { name: 'no fractional digits', eventTime: '2026-01-01T00:00:00Z' },
    { name: 'milliseconds (a plain Date through client-node)', eventTime: '2026-01-01T00:00:00.130Z' },
  ])(
    'refuses an eventTime with $name in the decoder (400), as MicroTime needs six digits',
    async ({ eventTime }) => {
      expect(
        await codeOf(
          events.createNamespacedEvent({ namespace: 'default', body: { ...event(), eventTime } as never }),
        ),
      ).toBe(400);
    },
  );

  it('keeps core/v1 Events apart, validated by their own schema', async () => {
    const core = kubeConfigFor(double.url).makeApiClient(CoreV1Api);
    // A core Event requires involvedObject: an events.k8s.io-shaped body is not one.
    expect(
      await codeOf(
        core.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'x' } } as never }),
      ),
    ).toBe(422);
    expect((await events.listNamespacedEvent({ namespace: 'default' })).items).toEqual([]);
  });

  it('answers injected faults until they are undone', async () => {
    const undo = double.fail({ group: 'events.k8s.io', resource: 'events', verb: 'create' });
    expect(await codeOf(events.createNamespacedEvent({ namespace: 'default', body: event() }))).toBe(500);
    expect((await events.listNamespacedEvent({ namespace: 'default' })).items).toEqual([]); // list unaffected
    undo();
    expect(await codeOf(events.createNamespacedEvent({ namespace: 'default', body: event() }))).toBe(201);
    expect(double.requests.filter((r) => r.verb === 'create').map((r) => r.status)).toEqual([500, 201]);
  });
});
