/**
 * Hostile and absurd input against the real controller process (local mode): schema-valid records no
 * training can produce, records for jobs that do not exist, 50,000 scattered sequence numbers for one
 * task, and HTTP requests a web page could send. Each is refused or absorbed and counted, and the
 * scheduling rounds go on for every job.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsTopic, parseTopic, type TaskId } from '../../shared/src/topics';
import { killAll, until } from './harness/children';
import {
  authHeader,
  FAULT_API_TOKEN,
  killLocalProcesses,
  metric,
  startLocal,
  taskAuth,
  type LocalController,
} from './harness/local-mode';

const root = mkdtempSync(join(tmpdir(), 'fault-hostile-'));
const stateDir = join(root, 'controller');
const TOKEN = FAULT_API_TOKEN;
let controller: LocalController;
let api = '';
let brokerUrl = '';
/**
 * The embedded broker refuses anonymous clients and lets a task publish only its own topics
 * (ADR 0031): the hostile publisher here holds each task's real credential, as a compromised
 * training container would. One connection per task.
 */
const clients = new Map<string, MqttClient>();
async function asTask(t: TaskId): Promise<MqttClient> {
  const key = metricsTopic(t);
  const have = clients.get(key);
  if (have) return have;
  const auth = taskAuth(stateDir, t);
  const c = await mqtt.connectAsync(brokerUrl, { ...auth, clientId: auth.username, reconnectPeriod: 200 });
  clients.set(key, c);
  return c;
}
const client = {
  publishAsync: async (topic: string, payload: string, o: { qos: 1 }) => {
    const t = parseTopic(topic);
    if (t?.kind !== 'metrics') throw new Error(`not a metrics topic: ${topic}`);
    return (await asTask(t.task)).publishAsync(topic, payload, o);
  },
};
const JOB = {
  name: 'victim',
  batchSize: 64,
  stepsPerEpoch: 100,
  maxEpochs: 40,
  psDemand: { cpu: 1 },
  workerDemand: { cpu: 1 },
  maxPs: 2,
  maxWorkers: 2,
};
const BYSTANDER = { ...JOB, name: 'bystander' };

beforeAll(async () => {
  controller = startLocal(stateDir, [
    '--workload',
    'none',
    '--time-scale',
    '5',
    '--interval',
    '10',
    '--fresh',
  ]);
  api = await controller.api();
  for (const spec of [JOB, BYSTANDER]) {
    const res = await fetch(`${api}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(spec),
    });
    expect(res.status).toBe(201);
  }
  brokerUrl = await controller.broker();
}, 120_000);

afterAll(async () => {
  // Processes first: a failing close must not leave the controller running.
  killLocalProcesses(stateDir);
  await killAll();
  for (const c of clients.values()) await c.endAsync(true).catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});

const task = (job: string, index: number): TaskId => ({ namespace: 'default', job, role: 'ps', index });
const record = (seq: number, over: Record<string, unknown> = {}) => ({
  v: 1,
  seq,
  ts: Date.now(),
  framework: 'mxnet',
  kind: 'batch',
  epoch: 1,
  batch: seq % 1000,
  samplesPerSec: 100,
  stepTime: 0.3,
  loss: 1,
  lossName: 'cross-entropy',
  metrics: {},
  ...over,
});

/** Full rounds keep coming (none fails for every job), however absurd one job's input. */
async function expectRoundsGoOn(): Promise<void> {
  const before = await metric(api, 'optimus_rounds_total');
  await until(
    'three more rounds',
    async () => (await metric(api, 'optimus_rounds_total')) >= before + 3,
    60_000,
  );
  expect(controller.child.stderr()).not.toMatch(/round failed/);
}

describe('hostile input', () => {
  it('300 schema-valid but impossible records (epoch 1e12, speed 1e300): refused as out-of-range, rounds go on', async () => {
    const before = await metric(api, 'optimus_messages_rejected_total', { reason: 'out-of-range' });
    for (let i = 0; i < 300; i++) {
      const over = i % 2 === 0 ? { epoch: 1e12 } : { samplesPerSec: 1e300, kind: 'epoch' };
      await client.publishAsync(metricsTopic(task(JOB.name, i % 2)), JSON.stringify(record(i, over)), {
        qos: 1,
      });
    }
    await until(
      'counted',
      async () =>
        (await metric(api, 'optimus_messages_rejected_total', { reason: 'out-of-range' })) >= before + 300,
      20_000,
    );
    expect(
      await metric(api, 'optimus_records_out_of_range_total', { field: 'epoch' }),
    ).toBeGreaterThanOrEqual(150);
    expect(
      await metric(api, 'optimus_records_out_of_range_total', { field: 'samplesPerSec' }),
    ).toBeGreaterThanOrEqual(150);
    await expectRoundsGoOn();
  });

  it('extreme but possible records (epoch 10^6, 10^9 samples/s) are accepted and cost the models nothing unbounded', async () => {
    const accepted = await metric(api, 'optimus_messages_received_total');
    const batch = {
      v: 2,
      records: Array.from({ length: 200 }, (_, i) =>
        record(10_000 + i, {
          epoch: i % 2 ? 1_000_000 : 3,
          samplesPerSec: 1e9,
          kind: i % 3 ? 'batch' : 'epoch',
        }),
      ),
    };
    await client.publishAsync(
      metricsTopic({ namespace: 'default', job: JOB.name, role: 'worker', index: 0 }),
      JSON.stringify(batch),
      { qos: 1 },
    );
    await until(
      'accepted',
      async () => (await metric(api, 'optimus_messages_received_total')) >= accepted + 200,
      20_000,
    );
    await expectRoundsGoOn();
    const view = (await (
      await fetch(`${api}/api/v1/jobs/default/${BYSTANDER.name}`, { headers: authHeader })
    ).json()) as {
      phase: string;
    };
    expect(view.phase).not.toBe('failed');
  });

  it('records for jobs that do not exist are counted on /metrics (unknown-job)', async () => {
    const before = await metric(api, 'optimus_messages_rejected_total', { reason: 'unknown-job' });
    for (let i = 0; i < 50; i++)
      await client.publishAsync(metricsTopic(task(`ghost-${i % 5}`, 0)), JSON.stringify(record(i)), {
        qos: 1,
      });
    await until(
      'counted',
      async () =>
        (await metric(api, 'optimus_messages_rejected_total', { reason: 'unknown-job' })) >= before + 50,
      20_000,
    );
  });

  it('50,000 scattered seqs for one task: all stored once, rounds go on', async () => {
    const accepted = await metric(api, 'optimus_messages_received_total');
    const seqs = Array.from({ length: 50_000 }, (_, i) => i * 7919 + 1_000_000); // no two adjacent
    for (let i = 0; i < seqs.length; i += 250) {
      const records = seqs.slice(i, i + 250).map((s) => record(s));
      await client.publishAsync(metricsTopic(task(JOB.name, 1)), JSON.stringify({ v: 2, records }), {
        qos: 1,
      });
    }
    // And every one of them again: all duplicates.
    const dups = await metric(api, 'optimus_messages_rejected_total', { reason: 'duplicate' });
    for (let i = 0; i < seqs.length; i += 250) {
      const records = seqs.slice(i, i + 250).map((s) => record(s));
      await client.publishAsync(metricsTopic(task(JOB.name, 1)), JSON.stringify({ v: 2, records }), {
        qos: 1,
      });
    }
    await until(
      'accepted',
      async () => (await metric(api, 'optimus_messages_received_total')) >= accepted + 50_000,
      60_000,
    );
    await until(
      'duplicates',
      async () =>
        (await metric(api, 'optimus_messages_rejected_total', { reason: 'duplicate' })) >= dups + 50_000,
      60_000,
    );
    await expectRoundsGoOn();
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['*/*', '*/*'],
  ])('a job sent as %s gets 415 and is not created', async (_n, type) => {
    const res = await fetch(`${api}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': type, authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ ...JOB, name: 'via-form' }),
    });
    expect(res.status).toBe(415);
    expect((await fetch(`${api}/api/v1/jobs/default/via-form`, { headers: authHeader })).status).toBe(404);
  });

  it('a wrong or missing token gets 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
    for (const auth of [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${TOKEN}x` }]) {
      const res = await fetch(`${api}/api/v1/jobs/default/${JOB.name}`, { method: 'DELETE', headers: auth });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    // Reads need it too.
    expect((await fetch(`${api}/api/v1/jobs/default/${JOB.name}`)).status).toBe(401);
    expect((await fetch(`${api}/api/v1/jobs/default/${JOB.name}`, { headers: authHeader })).status).toBe(200);
  });

  it('the API listens on loopback only', async () => {
    expect(api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const port = new URL(api).port;
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    if (external) await expect(fetch(`http://${external.address}:${port}/healthz`)).rejects.toThrow();
  });
});
