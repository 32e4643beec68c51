/**
 * End to end: the bundled sidecar against real brokers — the embedded aedes always, and Mosquitto
 * (MQTT 5) when OPTIMUS_TEST_MOSQUITTO_URL is set. What a subscriber receives is what counts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../shared/src/schemas';
import { buildSidecar } from '../build.mjs';
import { aedesBroker, externalBroker, type TestBroker } from './helpers/broker';
import { type Running, spawnSidecar } from './helpers/spawn';
import { type Collected, distinct, subscribe } from './helpers/subscriber';

const speedLine = (batch: number): string =>
  `INFO:root:Epoch[0] Batch [${batch}]\tSpeed: 100.00 samples/sec\taccuracy=0.500000\n`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every batch number arrived, each under exactly one seq, seqs increasing with the log order. */
function expectExactlyOnceBySeq(records: readonly MetricsRecord[], batches: readonly number[]): void {
  const bySeq = new Map<number, string>();
  for (const r of records) {
    const body = JSON.stringify({ ...r, ts: 0 });
    const seen = bySeq.get(r.seq);
    if (seen !== undefined) expect(body, `seq ${r.seq} re-sent with other content`).toBe(seen);
    bySeq.set(r.seq, body);
  }
  const unique = distinct(records);
  expect(unique.map((r) => r.batch)).toEqual(batches);
}

const brokers: { label: string; make: () => Promise<TestBroker> }[] = [
  { label: 'embedded aedes (MQTT 3.1.1)', make: aedesBroker },
];
const mosquitto = process.env['OPTIMUS_TEST_MOSQUITTO_URL'];
if (mosquitto !== undefined && mosquitto !== '') {
  brokers.push({ label: `Mosquitto at ${mosquitto} (MQTT 5)`, make: () => externalBroker(mosquitto, 5) });
}

beforeAll(async () => {
  await buildSidecar();
});

describe.each(brokers)('sidecar end to end via $label', ({ make }) => {
  let broker: TestBroker;
  let dir: string;
  let job: string;
  let sub: Collected;
  const running: Running[] = [];
  let jobCounter = 0;

  beforeAll(async () => {
    broker = await make();
  });
  afterAll(async () => {
    await broker.close();
  });
  afterEach(async () => {
    for (const r of running.splice(0)) r.child.kill('SIGKILL');
    await sub.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const setup = async (): Promise<string> => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-e2e-'));
    job = `job-${process.pid}-${jobCounter++}`;
    sub = await subscribe(broker.url, `optimus/v1/ml/${job}/#`, broker.version);
    return path.join(dir, 'train.log');
  };
  const start = (log: string, extra: Record<string, string> = {}): Running => {
    const r = spawnSidecar(
      { log, broker: broker.sidecarUrl, 'batch-size': '32', ...extra },
      { OPTIMUS_JOB: job, OPTIMUS_MQTT_VERSION: String(broker.version) },
    );
    running.push(r);
    return r;
  };
  const append = (log: string, from: number, to: number): number[] => {
    const batches: number[] = [];
    for (let b = from; b < to; b++) batches.push(b);
    fs.appendFileSync(log, batches.map(speedLine).join(''));
    return batches;
  };

  it('delivers a whole fixture log, then `done`, and exits 0 after the done marker', async () => {
    const log = await setup();
    fs.copyFileSync(path.resolve(import.meta.dirname, 'fixtures/mxnet-1.4.log'), log);
    const run = start(log);
    await sub.until(() => sub.records.length >= 5);
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    await sub.until(() => sub.statuses.includes('done'));
    expect(sub.statuses).toEqual(['online', 'done']);
    expect(sub.invalid).toBe(0);
    const kinds = distinct(sub.records).map((r) => r.kind);
    expect(kinds).toEqual(['batch', 'batch', 'epoch', 'checkpoint', 'validation']);
    expect(distinct(sub.records)[0]).toMatchObject({
      framework: 'mxnet',
      epoch: 0,
      batch: 50,
      samplesPerSec: 1024.35,
    });
  });

  it('loses nothing across a broker outage in the middle', async () => {
    const log = await setup();
    const run = start(log);
    const batches = append(log, 0, 20);
    await sub.until(() => distinct(sub.records).length >= 20);
    await broker.outage();
    batches.push(...append(log, 20, 60));
    await sleep(300);
    await broker.recover(() => sub.resubscribed());
    batches.push(...append(log, 60, 80));
    await sub.until(() => distinct(sub.records).length >= 80);
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    expectExactlyOnceBySeq(sub.records, batches);
  });

  it('after a reconnect, waits the whole confirmation time again before it leaves unconfirmed records', async () => {
    // No controller confirms here: the sidecar leaves after OPTIMUS_CONFIRM_WAIT_SEC with the broker
    // holding its records. A broker restart during that wait may have lost them, so the wait must
    // start over from the new session's acknowledgements, not end at once on the old deadline.
    const log = await setup();
    await sub.close();
    sub = await subscribe(broker.url, `optimus/v1/ml/${job}/#`, broker.version, { confirm: false });
    const run = start(log, { 'confirm-wait-sec': '2' });
    append(log, 0, 20);
    await sub.until(() => distinct(sub.records).length >= 20);
    fs.writeFileSync(`${log}.done`, '');
    await broker.outage();
    await sleep(2500); // past the first deadline while the broker is away
    const before = sub.records.length;
    await broker.recover(() => sub.resubscribed());
    await sub.until(() => sub.records.length >= before + 20); // resent in the new session
    const resentAt = Date.now();
    expect(await run.exited).toBe(0);
    expect(Date.now() - resentAt).toBeGreaterThanOrEqual(1500);
  });

  it('a controller that comes online after the training ended gets everything again, and the whole wait (ADR 0029)', async () => {
    // The sidecar's records reach a broker on which no controller listens yet (one restarted without
    // its state: the controller has not subscribed again), and the broker acknowledges them. The
    // controller then comes online — the first status this sidecar ever sees — with a disk slow
    // enough that its confirmation lands after the wait counted from those acknowledgements.
    const log = await setup();
    await sub.close();
    const run = start(log, { 'confirm-wait-sec': '2' });
    const batches = append(log, 0, 20);
    fs.writeFileSync(`${log}.done`, '');
    await sleep(1500); // sent and acknowledged by the broker: nobody received them
    sub = await subscribe(broker.url, `optimus/v1/ml/${job}/#`, broker.version, {
      announce: true,
      durableDelayMs: 1000,
    });
    expect(await run.exited).toBe(0);
    expectExactlyOnceBySeq(sub.records, batches);
    expect(run.stderr()).not.toContain('has not confirmed');
  });

  it('loses nothing across an outage while lines stream in', async () => {
    const log = await setup();
    // A short reconnect backoff keeps the test's timing independent of how long the outage lasted.
    const run = start(log, { 'reconnect-max-ms': '1000' });
    // One line every 10 ms keeps the tailer batching while the connection drops: the loss must be
    // noticed mid-stream and everything unacknowledged resent, in order, after the reconnect.
    const batches: number[] = [];
    let next = 0;
    const trickle = setInterval(() => batches.push(...append(log, next, ++next)), 10);
    try {
      await sub.until(() => distinct(sub.records).length >= 20);
      await broker.outage();
      await sleep(300);
      await broker.recover(() => sub.resubscribed());
      const target = next + 20; // lines written after the recovery arrive too
      await sub.until(() => distinct(sub.records).length >= target, 20_000);
    } finally {
      clearInterval(trickle);
    }
    await sub.until(() => distinct(sub.records).length >= next);
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    expectExactlyOnceBySeq(sub.records, batches);
  });

  it('keeps records on disk when the sidecar restarts while the broker is down', async () => {
    const log = await setup();
    let run = start(log);
    const batches = append(log, 0, 10);
    await sub.until(() => distinct(sub.records).length >= 10);
    await broker.outage();
    batches.push(...append(log, 10, 40));
    await sleep(400); // read and queued on disk, unacknowledged
    run.child.kill('SIGKILL');
    await run.exited;
    run = start(log);
    batches.push(...append(log, 40, 50));
    await sleep(300);
    await broker.recover(() => sub.resubscribed());
    await sub
      .until(() => distinct(sub.records).length >= 50)
      .catch((e: unknown) => {
        throw new Error(`${String(e)}\n${run.stderr()}`);
      });
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    expectExactlyOnceBySeq(sub.records, batches);
  });

  it('neither re-sends nor skips after a clean restart (saved position)', async () => {
    const log = await setup();
    let run = start(log);
    const batches = append(log, 0, 10);
    await sub.until(() => distinct(sub.records).length >= 10);
    await sleep(1200); // the position is saved at most a second later
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    batches.push(...append(log, 10, 15));
    run = start(log);
    await sub.until(() => distinct(sub.records).length >= 15);
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    expect(sub.records).toHaveLength(15);
    expectExactlyOnceBySeq(sub.records, batches);
  });

  it('a SIGTERM after the done marker still delivers everything and exits 0', async () => {
    const log = await setup();
    const run = start(log, { 'poll-ms': '5000' });
    await sub.until(() => sub.statuses.includes('online'));
    const batches = append(log, 0, 30);
    fs.writeFileSync(`${log}.done`, '');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    await sub.until(() => sub.statuses.includes('done'));
    expectExactlyOnceBySeq(sub.records, batches);
  });

  it('follows rotation (rename + new file) and copytruncate', async () => {
    const log = await setup();
    const run = start(log);
    const batches = append(log, 0, 5);
    await sub.until(() => distinct(sub.records).length >= 5);
    fs.renameSync(log, `${log}.1`);
    fs.appendFileSync(`${log}.1`, speedLine(5)); // written to the old file after the rename
    batches.push(5);
    batches.push(...append(log, 6, 10));
    await sub.until(() => distinct(sub.records).length >= 10);
    fs.truncateSync(log, 0);
    await sleep(300);
    batches.push(...append(log, 10, 12));
    await sub.until(() => distinct(sub.records).length >= 12);
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    expectExactlyOnceBySeq(sub.records, batches);
  });

  it('waits for a log that does not exist yet; the Last Will says `lost` when killed', async () => {
    const log = await setup();
    const run = start(log);
    await sleep(300);
    const batches = append(log, 0, 3);
    await sub.until(() => distinct(sub.records).length >= 3);
    expectExactlyOnceBySeq(sub.records, batches);
    run.child.kill('SIGKILL');
    await sub.until(() => sub.statuses.includes('lost'), 5000);
    expect(sub.statuses).toEqual(['online', 'lost']);
  });

  it('with --mqtt-version auto, connects whichever version the broker speaks', async () => {
    const log = await setup();
    const run = start(log, { 'mqtt-version': 'auto' });
    const batches = append(log, 0, 3);
    await sub.until(() => distinct(sub.records).length >= 3);
    fs.writeFileSync(`${log}.done`, '');
    expect(await run.exited).toBe(0);
    expectExactlyOnceBySeq(sub.records, batches);
    expect(run.stderr()).toMatch(new RegExp(`"msg":"connected","version":${broker.version}`));
  });

  it('reads standard input and exits 0 at its end', async () => {
    await setup();
    const run = start('-');
    run.child.stdin?.end(fs.readFileSync(path.resolve(import.meta.dirname, 'fixtures/keras.log')));
    expect(await run.exited).toBe(0);
    await sub.until(() => sub.statuses.includes('done'));
    expect(distinct(sub.records).map((r) => r.framework)).toEqual(['keras', 'keras', 'keras']);
  });
});

describe('configuration errors', () => {
  it('names the missing variable and exits 2', async () => {
    const run = spawnSidecar({ log: '/tmp/x.log' }, { OPTIMUS_JOB: 'j' });
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('OPTIMUS_BROKER_URL (--broker) is required');
  });

  it('names the state directory it cannot create and exits 2', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-')), 'plain-file');
    fs.writeFileSync(file, '');
    const run = spawnSidecar(
      { log: '/tmp/x.log', broker: 'mqtt://127.0.0.1:1', 'state-dir': path.join(file, 'sub') },
      { OPTIMUS_JOB: 'j' },
    );
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('OPTIMUS_STATE_DIR (--state-dir): cannot create');
  });
});

describe('sidecar stopping with its broker gone for good', () => {
  it('exits on a second SIGTERM while it reconnects (the run that started it was killed)', async () => {
    const broker = await aedesBroker();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-gone-'));
    const log = path.join(dir, 'train.log');
    const job = `gone-${process.pid}`;
    const sub = await subscribe(broker.url, `optimus/v1/ml/${job}/#`, broker.version);
    const run = spawnSidecar(
      { log, broker: broker.sidecarUrl, 'batch-size': '32' },
      { OPTIMUS_JOB: job, OPTIMUS_MQTT_VERSION: String(broker.version) },
    );
    try {
      await sub.until(() => sub.statuses.includes('online'));
      await sub.close();
      await broker.close(); // never comes back: the sidecar reconnects in vain
      fs.appendFileSync(log, speedLine(0) + speedLine(1));
      fs.writeFileSync(`${log}.done`, '');
      await sleep(1500);
      run.child.kill('SIGTERM'); // the training ended: it tries to deliver first (a grace period)
      await sleep(300);
      run.child.kill('SIGTERM'); // the second one stops it at once
      const code = await Promise.race([run.exited, sleep(5000).then(() => 'still running' as const)]);
      expect(code).toBe(1); // records were pending: not a clean delivery
    } finally {
      run.child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
