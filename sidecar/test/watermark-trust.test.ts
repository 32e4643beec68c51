/**
 * Whose watermark the sidecar believes (issue 28, ADR 0029). A watermark lets records leave the
 * outbox, so a forged one is a way to lose them. Two defences, each tested against a real broker
 * with the real sidecar bundle:
 *
 * - the broker lets only the controller publish watermarks: the chart's Mosquitto (its rendered
 *   configuration, dynamic-security identities per task) refuses every job credential on `…/stored`,
 *   so a forgery never reaches the sidecar;
 * - the sidecar takes a watermark only for records it sent: one beyond them, which any client of a
 *   broker without ACLs (here aedes, as embedded in local mode) can publish, is refused and counted,
 *   and the outbox keeps everything until the real controller confirms.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynsecClient } from '../../controller/src/broker-access/dynsec-client';
import { DynsecIdentities } from '../../controller/src/broker-access/identities';
import { jobPassword, taskUsername, type JobIdentity } from '../../controller/src/broker-access/job-identity';
import { CONTROLLER_CLIENT_ID, storedTopic, type TaskId } from '../../shared/src/topics';
import { brokerConfig } from '../../test/chart/broker-config';
import { hasMosquitto, startChartMosquitto, type ChartMosquitto } from '../../test/chart/chart-mosquitto';
import { ensureHelm } from '../../test/chart/helm';
import { renderChart } from '../../test/chart/render';
import { buildSidecar } from '../build.mjs';
import { aedesBroker, type TestBroker } from './helpers/broker';
import { type Running, spawnSidecar } from './helpers/spawn';
import { type Collected, distinct, subscribe } from './helpers/subscriber';

const speedLine = (batch: number): string =>
  `INFO:root:Epoch[0] Batch [${batch}]\tSpeed: 100.00 samples/sec\taccuracy=0.500000\n`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mark = (from: number, through: number): string =>
  JSON.stringify({ v: 1, from, through, ts: Date.now() });

const dirs: string[] = [];
const running: Running[] = [];
beforeAll(async () => {
  await buildSidecar();
});
afterEach(() => {
  for (const r of running.splice(0)) r.child.kill('SIGKILL');
});
afterAll(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A log of `n` lines and a sidecar following it; the done marker is already there. */
function startTask(o: {
  job: string;
  url: string;
  version: 4 | 5;
  n: number;
  env?: Record<string, string>;
}): { run: Running; log: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-trust-'));
  dirs.push(dir);
  const log = path.join(dir, 'train.log');
  fs.writeFileSync(log, Array.from({ length: o.n }, (_, b) => speedLine(b)).join(''));
  const run = spawnSidecar(
    { log, broker: o.url, 'batch-size': '32', 'confirm-wait-sec': '120' },
    { OPTIMUS_JOB: o.job, OPTIMUS_MQTT_VERSION: String(o.version), ...o.env },
  );
  running.push(run);
  return { run, log };
}

/** True when the process is still running after `ms` (it waits for a confirmation). */
const stillRunningAfter = async (run: Running, ms: number): Promise<boolean> =>
  (await Promise.race([run.exited.then(() => false), sleep(ms).then(() => true)])) === true;

describe('a sidecar on aedes (no ACLs, as a broker without them): only watermarks for records it sent', () => {
  let broker: TestBroker;
  let sub: Collected | null = null;
  let forger: MqttClient | null = null;
  beforeAll(async () => {
    broker = await aedesBroker();
  });
  afterAll(async () => {
    await broker.close();
  });
  afterEach(async () => {
    await sub?.close();
    await forger?.endAsync(true);
    sub = forger = null;
  });

  it('refuses and counts a retained watermark beyond what it sent; the real confirmation still lets it finish', async () => {
    const job = `trust-${process.pid}`;
    const task: TaskId = { namespace: 'ml', job, role: 'worker', index: 0 };
    sub = await subscribe(broker.url, `optimus/v1/ml/${job}/#`, 4, { confirm: false });
    const { run, log } = startTask({ job, url: broker.sidecarUrl, version: 4, n: 10 });
    await sub.until(() => distinct(sub?.records ?? []).length >= 10);
    const seqs = distinct(sub.records).map((r) => r.seq);
    const [first, last] = [seqs[0] as number, seqs.at(-1) as number];
    forger = await mqtt.connectAsync(broker.url, { clientId: 'forger', reconnectPeriod: 0 });
    // "Everything up to a seq this sidecar will only reach in a million records is stored."
    await forger.publishAsync(storedTopic(task), mark(first, last + 1_000_000), { qos: 1, retain: true });
    fs.writeFileSync(`${log}.done`, '');
    expect(await stillRunningAfter(run, 1500)).toBe(true); // the outbox still holds all ten
    expect(run.stderr()).toContain('refused a watermark beyond the records this sidecar sent');
    // The controller's own watermark, for exactly what was sent.
    await forger.publishAsync(storedTopic(task), mark(first, last), { qos: 1, retain: true });
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toMatch(/"msg":"done".*"refusedWatermarks":1/);
    expect(run.stderr()).not.toContain('has not confirmed');
    await forger.publishAsync(storedTopic(task), '', { qos: 1, retain: true });
  });
});

describe.skipIf(!hasMosquitto)(
  "a sidecar on Mosquitto with the chart's rendered configuration: only the controller publishes watermarks",
  () => {
    let mosq: ChartMosquitto;
    let admin: MqttClient;
    const key = 'the controller key';
    const job: JobIdentity = { namespace: 'ml', job: 'trusted', maxPs: 1, maxWorkers: 2 };
    const task: TaskId = { namespace: 'ml', job: 'trusted', role: 'worker', index: 0 };
    const sibling: TaskId = { ...task, index: 1 };
    let controllerAuth: { username: string; password: string };

    beforeAll(async () => {
      ensureHelm();
      const config = brokerConfig(await renderChart());
      controllerAuth = config.controller;
      mosq = await startChartMosquitto({ config });
      const asController = (): Promise<MqttClient> =>
        mqtt.connectAsync(mosq.url, {
          ...controllerAuth,
          clientId: CONTROLLER_CLIENT_ID,
          protocolVersion: 5,
          reconnectPeriod: 0,
        });
      // The first time, giving the controller its role makes the broker disconnect it; then it has it.
      const first = await asController();
      await new DynsecIdentities(new DynsecClient(first), controllerAuth.username).ensureController();
      for (let i = 0; i < 40 && first.connected; i++) await sleep(50);
      await first.endAsync(true);
      admin = await asController();
      const identities = new DynsecIdentities(new DynsecClient(admin), controllerAuth.username);
      await identities.ensureController();
      await identities.ensureJob(job, jobPassword(key, job));
    }, 60_000);
    afterAll(async () => {
      await admin?.endAsync(true);
      await mosq?.stop();
    });

    it('a job credential cannot forge one (the broker refuses it); the controller’s lets the sidecar finish', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-trust-pw-'));
      dirs.push(dir);
      const passwordFile = path.join(dir, 'password');
      fs.writeFileSync(passwordFile, jobPassword(key, job));
      const sub = await subscribe(mosq.url, 'optimus/v1/ml/trusted/#', 5, {
        confirm: false,
        client: { ...controllerAuth, clientId: 'trust-spy' },
      });
      const forger = await mqtt.connectAsync(mosq.url, {
        username: taskUsername(sibling),
        password: jobPassword(key, job),
        clientId: taskUsername(sibling),
        protocolVersion: 5,
        reconnectPeriod: 0,
      });
      try {
        const { run, log } = startTask({
          job: 'trusted',
          url: mosq.url,
          version: 5,
          n: 10,
          env: { OPTIMUS_BROKER_PASSWORD_FILE: passwordFile },
        });
        await sub.until(() => distinct(sub.records).length >= 10);
        const seqs = distinct(sub.records).map((r) => r.seq);
        const [first, last] = [seqs[0] as number, seqs.at(-1) as number];
        // A sibling task of the same job claims the sidecar's records are stored: exactly the
        // records it sent (the sidecar alone could not tell this one from the controller's).
        const refused = await forger
          .publishAsync(storedTopic(task), mark(first, last), { qos: 1, retain: true })
          .then(
            () => 0,
            (err: unknown) => (err as { code?: number }).code ?? -1,
          );
        expect(refused).toBe(135); // MQTT 5: not authorised
        fs.writeFileSync(`${log}.done`, '');
        expect(await stillRunningAfter(run, 1500)).toBe(true);
        await admin.publishAsync(storedTopic(task), mark(first, last), { qos: 1, retain: true });
        expect(await run.exited).toBe(0);
        expect(run.stderr()).toMatch(/"msg":"done".*"refusedWatermarks":0/);
        expect(run.stderr()).not.toContain('has not confirmed');
      } finally {
        await forger.endAsync(true);
        await sub.close();
      }
    });
  },
);
