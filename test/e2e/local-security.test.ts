/**
 * Local mode's security promises on a real run (issue 28, ADR 0031): the forged records
 * (schema-valid, stepsPerSec 5e6, meant to end a job as Converged) cannot reach the controller —
 * neither from an anonymous client nor under another job's identity — while the job's own sidecars
 * deliver; the run's token is in a 0600 file and reads need it; a second run on the live directory is
 * refused with the holder named (ADR 0032).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBrokerCredentials } from '../../controller/src/local/broker-credentials';
import { startLocal, type LocalRun } from '../../controller/src/local/run-local';
import { StateDirLocked } from '../../controller/src/local/state-lock';
import { metricsTopic, type TaskId } from '../../shared/src/topics';
import { sleep, until } from './helpers';

const VICTIM = {
  name: 'victim',
  batchSize: 64,
  stepsPerEpoch: 200,
  maxEpochs: 50,
  psDemand: { cpu: 1 },
  workerDemand: { cpu: 1 },
  maxPs: 1,
  maxWorkers: 1,
};
const victimTask: TaskId = { namespace: 'default', job: 'victim', role: 'worker', index: 0 };
const other: TaskId = { namespace: 'default', job: 'other', role: 'worker', index: 0 };
/** Converged-looking epochs at an impossible speed: valid on the wire. */
const forged = (seq: number) =>
  JSON.stringify({
    v: 2,
    records: Array.from({ length: 20 }, (_, i) => ({
      v: 1,
      seq: 1_000_000 + seq * 20 + i,
      ts: Date.now(),
      framework: 'mxnet',
      kind: 'epoch',
      epoch: 40 + i,
      batch: null,
      samplesPerSec: 5e6,
      stepTime: 1e-6,
      loss: 1e-9,
      lossName: 'cross-entropy',
      metrics: {},
    })),
  });

describe('local mode security', () => {
  let dir = '';
  let run: LocalRun;
  const bearer = () => ({ headers: { authorization: `Bearer ${run.apiToken}` } });
  const received = async (): Promise<number> => {
    const text = await (await fetch(`${run.http.url}/metrics`, bearer())).text();
    return Number(/^optimus_messages_received_total (\S+)$/m.exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'optimus-security-'));
    run = await startLocal({
      stateDir: dir,
      workload: [],
      timeScale: 10,
      schedulingIntervalSec: 60,
      restartCostSec: 5,
      policy: 'optimus',
      httpPort: 0,
      logLevel: 'silent',
    });
    const res = await fetch(`${run.http.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...bearer().headers, 'content-type': 'application/json' },
      body: JSON.stringify(VICTIM),
    });
    expect(res.status).toBe(201);
    await until('the victim’s own records arrive', async () => (await received()) > 0, 90_000);
  }, 150_000);

  afterAll(async () => {
    await run?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses the issue’s forged records from an anonymous client', async () => {
    await expect(
      mqtt.connectAsync(run.brokerUrl, { clientId: 'forger', reconnectPeriod: 0, connectTimeout: 3000 }),
    ).rejects.toThrow(/Not authorized/i);
  });

  it('refuses them under another job’s identity: not one reaches the controller, the job does not end', async () => {
    const creds = new LocalBrokerCredentials(dir).task(other);
    const forger = await mqtt.connectAsync(run.brokerUrl, {
      ...creds,
      clientId: creds.username,
      reconnectPeriod: 0,
    });
    const before = await fetch(`${run.http.url}/api/v1/jobs/default/victim`, bearer()).then(
      (r) => r.json() as Promise<{ phase: string }>,
    );
    forger.publish(metricsTopic(victimTask), forged(0), { qos: 1 });
    await sleep(500);
    expect(forger.connected).toBe(false); // the broker closed it on the refused PUBLISH
    await forger.endAsync(true);
    // Whatever arrived meanwhile came from the victim's sidecar: none of the forged seqs is stored.
    const stored = readFileSync(join(dir, 'store', 'records.jsonl'), 'utf8');
    expect(stored).not.toContain('"samplesPerSec":5000000');
    const after = await fetch(`${run.http.url}/api/v1/jobs/default/victim`, bearer()).then(
      (r) => r.json() as Promise<{ phase: string; end?: { reason?: string } | null }>,
    );
    expect(after.phase).not.toBe('done');
    expect(before.phase).not.toBe('done');
  });

  it('writes the run’s token to a 0600 file, and reads need it', async () => {
    const file = join(dir, 'api-token');
    expect(readFileSync(file, 'utf8').trim()).toBe(run.apiToken);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'broker-access', 'key')).mode & 0o777).toBe(0o600);
    expect((await fetch(`${run.http.url}/api/v1/jobs`)).status).toBe(401);
    expect((await fetch(`${run.http.url}/api/v1/jobs`, bearer())).status).toBe(200);
    expect(run.dashboardUrl).toBe(`${run.http.url}/dashboard/#token=${encodeURIComponent(run.apiToken)}`);
  });

  it('refuses a second run on the live directory, naming this process', async () => {
    const second = startLocal({
      stateDir: dir,
      workload: [],
      timeScale: 10,
      schedulingIntervalSec: 60,
      restartCostSec: 5,
      policy: 'optimus',
      httpPort: 0,
      logLevel: 'silent',
    });
    await expect(second).rejects.toBeInstanceOf(StateDirLocked);
    await expect(second).rejects.toThrow(`in use by pid ${process.pid}`);
    // The live run is unharmed.
    expect((await fetch(`${run.http.url}/api/v1/jobs`, bearer())).status).toBe(200);
  });
});
