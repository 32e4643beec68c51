/**
 * One job's credential cannot fill the broker's volume (issue 28): the chart bounds the bytes queued
 * per client session, so a job that floods its topics while the controller is offline leaves at most
 * that much queued (and on disk), on Debian's real Mosquitto running the rendered configuration.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynsecClient } from '../../controller/src/broker-access/dynsec-client';
import { DynsecIdentities } from '../../controller/src/broker-access/identities';
import { jobPassword, taskUsername, type JobIdentity } from '../../controller/src/broker-access/job-identity';
import { CONTROLLER_CLIENT_ID, metricsTopic, type TaskId } from '../../shared/src/topics';
import { brokerConfig, parseConf } from './broker-config';
import { hasMosquitto, startChartMosquitto, type ChartMosquitto } from './chart-mosquitto';
import { ensureHelm } from './helm';
import { findObject, renderChart } from './render';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const quantityBytes = (q: string): number => {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(q);
  if (!m) throw new Error(`unexpected quantity ${q}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
};

beforeAll(() => ensureHelm());

describe('the broker bounds what one session may queue', () => {
  it('by default: a cap per session, with the data volume at least four caps large', async () => {
    const objects = await renderChart();
    const conf = parseConf(brokerConfig(objects).conf);
    const cap = Number(conf.get('max_queued_bytes')?.[0]);
    expect(cap).toBeGreaterThan(0);
    const pvc = findObject(objects, 'PersistentVolumeClaim') as unknown as {
      spec: { resources: { requests: { storage: string } } };
    };
    expect(quantityBytes(pvc.spec.resources.requests.storage)).toBeGreaterThanOrEqual(4 * cap);
  });

  it('refuses an unlimited queue (0) in the values', async () => {
    await expect(renderChart({ set: ['broker.mosquitto.maxQueuedBytes=0'] })).rejects.toThrow(
      /maxQueuedBytes|minimum/,
    );
  });
});

describe.skipIf(!hasMosquitto)('a job flooding its topics while the controller is away, on Mosquitto', () => {
  const CAP = 4 * 2 ** 20;
  const PAYLOAD = 16 * 2 ** 10;
  const FLOOD = 1000; // 16 MiB: four times the cap
  let mosq: ChartMosquitto;
  const clients: MqttClient[] = [];
  const key = 'the controller key';
  const job: JobIdentity = { namespace: 'ml', job: 'flood', maxPs: 1, maxWorkers: 1 };
  const task: TaskId = { namespace: 'ml', job: 'flood', role: 'worker', index: 0 };

  beforeAll(async () => {
    mosq = await startChartMosquitto({ set: [`broker.mosquitto.maxQueuedBytes=${CAP}`] });
    const config = mosq.config;
    const asController = () =>
      mqtt.connectAsync(mosq.url, {
        ...config.controller,
        clientId: CONTROLLER_CLIENT_ID,
        protocolVersion: 5,
        reconnectPeriod: 0,
      });
    const first = await asController();
    await new DynsecIdentities(new DynsecClient(first), config.controller.username).ensureController();
    for (let i = 0; i < 40 && first.connected; i++) await sleep(50);
    await first.endAsync(true);
    const admin = await asController();
    clients.push(admin);
    await new DynsecIdentities(new DynsecClient(admin), config.controller.username).ensureJob(
      job,
      jobPassword(key, job),
    );
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await mosq?.stop();
  });

  it('queues at most the cap for the offline session, and the saved state stays that small', async () => {
    const session = {
      ...mosq.config.controller,
      clientId: 'controller-queue',
      clean: false,
      protocolVersion: 5 as const,
      properties: { sessionExpiryInterval: 3600 },
      reconnectPeriod: 0,
    };
    const first = await mqtt.connectAsync(mosq.url, session);
    await first.subscribeAsync('optimus/v1/+/+/+/+/metrics', { qos: 1 });
    await first.endAsync();

    const flooder = await mqtt.connectAsync(mosq.url, {
      username: taskUsername(task),
      password: jobPassword(key, job),
      clientId: taskUsername(task),
      protocolVersion: 5,
      reconnectPeriod: 0,
    });
    clients.push(flooder);
    const payload = Buffer.alloc(PAYLOAD, 0x61);
    for (let i = 0; i < FLOOD; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, () => flooder.publishAsync(metricsTopic(task), payload, { qos: 1 })),
      );

    const db = join(mosq.dir, 'mosquitto/data/mosquitto.db');
    const flooded = Date.now();
    const saved = (): boolean => existsSync(db) && statSync(db).mtimeMs > flooded + 50;
    for (let i = 0; i < 200 && !saved(); i++) await sleep(50);
    expect(saved(), 'Mosquitto saved its state').toBe(true);
    // The saved state holds the queue: bounded by the cap (plus a few messages' framing and the
    // dynamic-security bookkeeping), where the unbounded queue held the whole 16 MiB.
    expect(statSync(db).size).toBeLessThan(CAP + 2 * 2 ** 20);

    let received = 0;
    const back = mqtt.connect(mosq.url, session);
    clients.push(back);
    back.on('message', (_t, p) => (received += p.length));
    let last = -1;
    for (let i = 0; i < 200 && received !== last; i++) {
      last = received;
      await sleep(100);
    }
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThanOrEqual(CAP + 100 * PAYLOAD);
    expect(received).toBeLessThan(FLOOD * PAYLOAD);
  }, 60_000);
});
