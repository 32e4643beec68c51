/**
 * The embedded broker's access rules on a real aedes (issue 28, ADR 0031), the same attacks the
 * chart's Mosquitto is put through (`test/chart/broker.test.ts`): anonymous clients, wrong passwords,
 * stolen client ids, forged records and watermarks, and subscriptions beyond one's own topics.
 * aedes speaks MQTT 3.1.1: a refused PUBLISH closes the connection (Mosquitto answers PUBACK 135 on
 * MQTT 5); either way the forged message reaches no one.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { metricsTopic, planTopic, statusTopic, storedTopic, type TaskId } from '../../../shared/src/topics';
import { filterCovers, LOCAL_CONTROLLER_ID, OBSERVER_USERNAME } from './broker-acl';
import { startEmbeddedBroker, type EmbeddedBroker, type Refusal } from './broker';
import { passwordOf } from './broker-credentials';

const key = randomBytes(32);
const taskA: TaskId = { namespace: 'ml', job: 'a', role: 'worker', index: 0 };
const siblingA: TaskId = { ...taskA, index: 1 };
const taskB: TaskId = { namespace: 'research', job: 'b', role: 'worker', index: 0 };
const idOf = (t: TaskId) => `optimus.${t.namespace}.${t.job}.${t.role}.${t.index}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The stepsPerSec-5e6 record of the issue: valid on the wire, absurd in fact. */
const forged = JSON.stringify({
  v: 1,
  seq: 1,
  ts: 1,
  framework: 'mxnet',
  kind: 'epoch',
  epoch: 999,
  batch: null,
  samplesPerSec: 5e6,
  stepTime: 1e-6,
  loss: 0,
  lossName: 'cross-entropy',
  metrics: {},
});

let broker: EmbeddedBroker;
const refusals: Refusal[] = [];
const clients: MqttClient[] = [];
let controller: MqttClient;
const seen: string[] = [];

const connect = async (o: IClientOptions): Promise<MqttClient> => {
  const c = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, connectTimeout: 3000, ...o });
  clients.push(c);
  return c;
};
const asTask = (t: TaskId, o: IClientOptions = {}) =>
  connect({ clientId: idOf(t), username: idOf(t), password: passwordOf(key, idOf(t)), ...o });
const asController = (o: IClientOptions = {}) =>
  connect({
    clientId: LOCAL_CONTROLLER_ID,
    username: LOCAL_CONTROLLER_ID,
    password: passwordOf(key, LOCAL_CONTROLLER_ID),
    clean: false,
    ...o,
  });
/** Publishes and reports whether the broker kept the connection (aedes closes it on a refusal). */
async function publishSurvives(c: MqttClient, topic: string, payload = forged): Promise<boolean> {
  c.publish(topic, payload, { qos: 1 });
  for (let i = 0; i < 40 && c.connected; i++) await sleep(25);
  return c.connected;
}
const subacks = (c: MqttClient, topics: string[]): Promise<number[]> =>
  new Promise((resolve) =>
    c.subscribe(topics, { qos: 1 }, (err, granted) => {
      // mqtt.js reports a refused filter as an error carrying the SUBACK's codes.
      const packet = (err as { packet?: { granted?: number[] } } | null)?.packet;
      resolve(packet?.granted ?? (granted ?? []).map((g) => g.qos));
    }),
  );

beforeAll(async () => {
  broker = await startEmbeddedBroker(0, { access: { key, onRefused: (r) => refusals.push(r) } });
  controller = await asController();
  controller.on('message', (t) => seen.push(t));
  await controller.subscribeAsync('optimus/v1/#', { qos: 1 });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync(true)));
  await broker.close();
});

/** What the controller received while `act` ran, after a sentinel from a legitimate task. */
async function controllerSaw(act: () => Promise<unknown>): Promise<string[]> {
  seen.length = 0;
  await act();
  const sentinel = await asTask({ ...taskA, role: 'ps' });
  await sentinel.publishAsync(metricsTopic({ ...taskA, role: 'ps' }), '{}', { qos: 1 });
  for (let i = 0; i < 40 && !seen.includes(metricsTopic({ ...taskA, role: 'ps' })); i++) await sleep(25);
  return seen.filter((t) => t !== metricsTopic({ ...taskA, role: 'ps' }));
}

describe('embedded broker access (aedes)', () => {
  it('delivers a task’s own metrics and status from its own identity', async () => {
    const a = await asTask(taskA);
    const got = await controllerSaw(async () => {
      await a.publishAsync(metricsTopic(taskA), '{}', { qos: 1 });
      await a.publishAsync(statusTopic(taskA), '{}', { qos: 1, retain: true });
    });
    expect(got).toEqual([metricsTopic(taskA), statusTopic(taskA)]);
  });

  it('refuses anonymous clients: the forged stepsPerSec-5e6 record of the issue cannot even be sent', async () => {
    await expect(connect({ clientId: 'anon' })).rejects.toThrow(/Not authorized/i);
    await expect(connect({ clientId: idOf(taskA) })).rejects.toThrow(/Not authorized/i);
    expect(refusals.some((r) => r.what === 'connect' && r.reason.includes('anonymous'))).toBe(true);
  });

  it('refuses wrong passwords, another task’s password and unknown users', async () => {
    await expect(asTask(taskA, { password: 'guess' })).rejects.toThrow(/Bad username or password/i);
    await expect(asTask(taskA, { password: passwordOf(key, idOf(taskB)) })).rejects.toThrow(/Bad username/i);
    await expect(
      connect({ clientId: 'me', username: 'me', password: passwordOf(key, 'me') }),
    ).rejects.toThrow(/Not authorized/i);
    // A key of another run opens nothing.
    await expect(asTask(taskA, { password: passwordOf(randomBytes(32), idOf(taskA)) })).rejects.toThrow();
  });

  it.each([
    ["job B's metrics (the forged record)", metricsTopic(taskB)],
    ["a sibling task's metrics", metricsTopic(siblingA)],
    ["job B's status", statusTopic(taskB)],
    ['its own plan', planTopic(taskA)],
    ["job B's plan", planTopic(taskB)],
    ["the controller's status", 'optimus/v1/controller/status'],
    ['a watermark for itself (only the controller confirms)', storedTopic(taskA)],
    ['a watermark for job B', storedTopic(taskB)],
    ['a topic outside optimus/v1', 'elsewhere/x'],
  ])('refuses task A publishing to %s: nobody receives it', async (_n, topic) => {
    const a = await asTask({ ...taskA, role: 'scheduler' });
    const got = await controllerSaw(async () => expect(await publishSurvives(a, topic)).toBe(false));
    expect(got).toEqual([]);
    expect(refusals.at(-1)).toMatchObject({ what: 'publish', topic });
  });

  it('refuses a task subscribing to `#`, to everything Optimus, or to another task’s watermark', async () => {
    const a = await asTask({ ...taskA, index: 5 });
    const got: string[] = [];
    a.on('message', (t) => got.push(t));
    expect(await subacks(a, ['#', 'optimus/v1/#', storedTopic(taskB), 'optimus/v1/ml/a/+/+/stored'])).toEqual(
      [128, 128, 128, 128],
    );
    const b = await asTask(taskB);
    await b.publishAsync(metricsTopic(taskB), '{}', { qos: 1 });
    await controller.publishAsync(storedTopic(taskB), '{"v":1}', { qos: 1, retain: true });
    await sleep(200);
    expect(got).toEqual([]);
  });

  it('lets a task read its own watermark and the controller status (retained), nothing else', async () => {
    await controller.publishAsync(storedTopic(taskA), '{"v":1,"from":0,"through":9,"ts":1}', {
      qos: 1,
      retain: true,
    });
    const a = await asTask(taskA, { clean: true });
    const got: string[] = [];
    a.on('message', (t) => got.push(t));
    expect(await subacks(a, [storedTopic(taskA), 'optimus/v1/controller/status'])).toEqual([1, 1]);
    for (let i = 0; i < 40 && got.length === 0; i++) await sleep(25);
    expect(got).toContain(storedTopic(taskA));
  });

  it.each([
    ["the controller's client id", LOCAL_CONTROLLER_ID],
    ['another id under the reserved prefix', 'optimus-controller-2'],
    ["a task of job B's client id", idOf(taskB)],
    ["a sibling task's client id", idOf(siblingA)],
    ['an id of its own choosing', 'anything'],
  ])(
    'refuses task A’s credential connecting under %s; the controller stays connected',
    async (_n, clientId) => {
      await expect(asTask(taskA, { clientId })).rejects.toThrow(/Not authorized/i);
      expect(controller.connected).toBe(true);
    },
  );

  it('a stolen controller id without the password is refused and does not kick the controller', async () => {
    let kicked = false;
    controller.once('close', () => (kicked = true));
    await expect(connect({ clientId: LOCAL_CONTROLLER_ID })).rejects.toThrow(/Not authorized/i);
    await expect(
      connect({ clientId: LOCAL_CONTROLLER_ID, username: LOCAL_CONTROLLER_ID, password: 'x' }),
    ).rejects.toThrow(/Bad username/i);
    await sleep(100);
    expect([kicked, controller.connected]).toEqual([false, true]);
  });

  it('even with the controller’s password, a second client cannot take its id while it is connected', async () => {
    let kicked = false;
    controller.once('close', () => (kicked = true));
    await expect(asController({ clean: true })).rejects.toThrow(/Identifier rejected/i);
    await sleep(100);
    expect([kicked, controller.connected]).toEqual([false, true]);
  });

  it('the controller may publish plans and watermarks; an observer reads everything and publishes nothing', async () => {
    const obs = await connect({
      clientId: `${OBSERVER_USERNAME}-test`,
      username: OBSERVER_USERNAME,
      password: passwordOf(key, OBSERVER_USERNAME),
    });
    const got: string[] = [];
    obs.on('message', (t) => got.push(t));
    await obs.subscribeAsync('optimus/v1/#', { qos: 1 });
    await controller.publishAsync(planTopic(taskB), '{}', { qos: 1, retain: true });
    for (let i = 0; i < 40 && !got.includes(planTopic(taskB)); i++) await sleep(25);
    expect(got).toContain(planTopic(taskB));
    expect(await publishSurvives(obs, metricsTopic(taskA))).toBe(false);
  });
});

describe('filterCovers', () => {
  it.each([
    ['optimus/v1/#', 'optimus/v1/+/+/+/+/metrics', true],
    ['optimus/v1/#', '#', false],
    ['optimus/v1/#', '$SYS/#', false],
    ['optimus/v1/ml/a/worker/0/stored', 'optimus/v1/ml/a/worker/0/stored', true],
    ['optimus/v1/ml/a/worker/0/stored', 'optimus/v1/ml/a/worker/+/stored', false],
    ['optimus/v1/ml/a/worker/0/stored', 'optimus/v1/ml/a/worker/0/#', false],
    ['optimus/v1/+/x', 'optimus/v1/+/x', true],
  ])('%s covers %s: %s', (pattern, filter, want) => expect(filterCovers(pattern, filter)).toBe(want));
});
