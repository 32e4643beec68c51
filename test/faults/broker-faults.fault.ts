/**
 * The broker killed (`kill -9`): the local mode's embedded broker (aedes, state in memory: its queues
 * and retained messages die with it) is supervised and started again on the same port, and the run
 * completes with its summary; Debian's Mosquitto started with the chart's rendered configuration
 * (persistence on a volume, saved on every change, dynamic security) is killed and restarted by the
 * test, and so is Mosquitto with its defaults (no persistence: sessions, queues and retained
 * messages die with it). In all three, every record the sidecars numbered is stored once. Run them
 * with `OPTIMUS_FAULTS_CONTENTION=cores` to have a busy loop per core beside them (issue 30: records
 * were lost only on a loaded machine).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killAll, sleep, until } from './harness/children';
import { killLocalProcesses, observerAuth, startLocal, storedRecords } from './harness/local-mode';
import { recordFault } from './harness/tally';
import { spyOnWire } from './harness/wire-spy';
import { hasMosquitto, startChartMosquitto, type ChartMosquitto } from '../chart/chart-mosquitto';
import { startPlainMosquitto, type PlainMosquitto } from './harness/plain-mosquitto';

const dirs: string[] = [];
const brokers: (ChartMosquitto | PlainMosquitto)[] = [];
afterAll(async () => {
  // Processes first: a failing broker stop must not leave a controller running.
  for (const d of dirs) killLocalProcesses(d);
  await killAll();
  for (const b of brokers) await b.stop().catch(() => undefined);
  // OPTIMUS_FAULTS_KEEP=1 keeps the state directories (logs, store, broker.stderr.log) to read.
  if (!process.env['OPTIMUS_FAULTS_KEEP']) for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The controller's last 64 KiB of stderr beside its state, for OPTIMUS_FAULTS_KEEP=1 readers. */
const keepStderr = (dir: string, text: string): void =>
  writeFileSync(join(dir, 'controller.stderr.log'), text);
const total = (dir: string): number => [...storedRecords(dir).values()].reduce((n, m) => n + m.size, 0);
const brokerPid = (dir: string): number =>
  (JSON.parse(readFileSync(join(dir, 'broker.json'), 'utf8')) as { pid: number }).pid;

interface Summary {
  jobs: { name: string; jct: number | null }[];
  messages: { received: number; lost: number };
}

describe('broker kill -9', () => {
  it('the embedded broker, twice: supervised, restarted on its port, the run ends with a summary, nothing lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fault-broker-'));
    dirs.push(dir);
    const run = startLocal(dir, [
      '--workload',
      'small',
      '--time-scale',
      '30',
      '--fresh',
      '--exit-when-done',
      '--json',
    ]);
    const spy = await spyOnWire(await run.broker(), observerAuth(dir));
    for (let kill = 1; kill <= 2; kill++) {
      const before = total(dir);
      await until('observations', () => total(dir) >= before + 80, 90_000);
      const pid = brokerPid(dir);
      process.kill(pid, 'SIGKILL');
      await until(
        'the broker started again',
        () => {
          try {
            return brokerPid(dir) !== pid;
          } catch {
            return false;
          }
        },
        20_000,
      );
      await sleep(500);
    }
    const code = await run.child.exit;
    keepStderr(dir, run.child.stderr());
    expect({ code, stderr: code === 0 ? '' : run.child.stderr().slice(-3000) }).toEqual({
      code: 0,
      stderr: '',
    });
    // The controller's log goes to <state>/controller.log (the terminal gets one line per change).
    expect(readFileSync(join(dir, 'controller.log'), 'utf8')).toContain('started it again on the same port');
    const summary = JSON.parse(run.child.stdout()) as Summary;
    // Tallied before the checks: a failing run's figures are the ones worth quoting.
    recordFault({
      row: 'embedded broker kill -9 (×2)',
      sent: summary.messages.received + summary.messages.lost,
      received: summary.messages.received,
      lost: summary.messages.lost,
      reused: spy.conflicts().length,
    });
    expect(summary.messages.lost).toBe(0);
    for (const j of summary.jobs) expect(j.jct, j.name).toBeGreaterThan(0);
    expect(total(dir)).toBe(summary.messages.received);
    expect(spy.conflicts()).toEqual([]);
    await spy.close();
  });

  it.skipIf(!hasMosquitto)(
    "Mosquitto with the chart's rendered configuration, twice: nothing lost, per-job identities throughout",
    async () => {
      const mosq = await startChartMosquitto();
      brokers.push(mosq);
      const dir = mkdtempSync(join(tmpdir(), 'fault-mosquitto-'));
      dirs.push(dir);
      // Outside the state directory, which --fresh empties.
      const passwordFile = join(mosq.dir, 'controller.password');
      writeFileSync(passwordFile, mosq.config.controller.password);
      const run = startLocal(
        dir,
        [
          '--workload',
          'small',
          '--time-scale',
          '30',
          '--fresh',
          '--exit-when-done',
          '--json',
          '--broker',
          mosq.url,
        ],
        {
          OPTIMUS_BROKER_USERNAME: mosq.config.controller.username,
          OPTIMUS_BROKER_PASSWORD_FILE: passwordFile,
          OPTIMUS_BROKER_IDENTITIES: 'dynsec',
        },
      );
      const spy = await spyOnWire(mosq.url, { ...mosq.config.controller });
      for (let kill = 1; kill <= 2; kill++) {
        const before = total(dir);
        await until('observations', () => total(dir) >= before + 80, 90_000);
        await mosq.kill9();
        await sleep(1000); // sidecars and the controller lose the broker; the trainers keep logging
        await mosq.restart();
      }
      const code = await run.child.exit;
      keepStderr(dir, run.child.stderr());
      expect({ code, stderr: code === 0 ? '' : run.child.stderr().slice(-3000) }).toEqual({
        code: 0,
        stderr: '',
      });
      const summary = JSON.parse(run.child.stdout()) as Summary;
      // Tallied before the checks: a failing run's figures are the ones worth quoting.
      recordFault({
        row: "Mosquitto kill -9 (×2), chart's configuration",
        sent: summary.messages.received + summary.messages.lost,
        received: summary.messages.received,
        lost: summary.messages.lost,
        reused: spy.conflicts().length,
      });
      expect(summary.messages.lost).toBe(0);
      for (const j of summary.jobs) expect(j.jct, j.name).toBeGreaterThan(0);
      expect(total(dir)).toBe(summary.messages.received);
      expect(spy.conflicts()).toEqual([]);
      // Every sidecar logged in as its own task (the only identities the broker has for them).
      const sidecarLogins = readFileSync(join(mosq.dir, 'mosquitto/data/dynamic-security.json'), 'utf8');
      expect(sidecarLogins).toMatch(/"username":\s*"optimus\.default\.alpha\.worker\.0"/);
      await spy.close();
    },
  );

  it.skipIf(!hasMosquitto)(
    'Mosquitto with its defaults (no persistence), twice: nothing lost although the broker forgets everything',
    async () => {
      const mosq = await startPlainMosquitto();
      brokers.push(mosq);
      const dir = mkdtempSync(join(tmpdir(), 'fault-plain-mosquitto-'));
      dirs.push(dir);
      const run = startLocal(dir, [
        '--workload',
        'small',
        '--time-scale',
        '30',
        '--fresh',
        '--exit-when-done',
        '--json',
        '--broker',
        mosq.url,
      ]);
      const spy = await spyOnWire(mosq.url);
      for (let kill = 1; kill <= 2; kill++) {
        const before = total(dir);
        await until('observations', () => total(dir) >= before + 80, 90_000);
        await mosq.kill9();
        await sleep(1000);
        await mosq.restart();
      }
      const code = await run.child.exit;
      keepStderr(dir, run.child.stderr());
      expect({ code, stderr: code === 0 ? '' : run.child.stderr().slice(-3000) }).toEqual({
        code: 0,
        stderr: '',
      });
      const summary = JSON.parse(run.child.stdout()) as Summary;
      // Tallied before the checks: a failing run's figures are the ones worth quoting.
      recordFault({
        row: 'Mosquitto kill -9 (×2), no persistence',
        sent: summary.messages.received + summary.messages.lost,
        received: summary.messages.received,
        lost: summary.messages.lost,
        reused: spy.conflicts().length,
      });
      expect(summary.messages.lost).toBe(0);
      for (const j of summary.jobs) expect(j.jct, j.name).toBeGreaterThan(0);
      expect(total(dir)).toBe(summary.messages.received);
      expect(spy.conflicts()).toEqual([]);
      await spy.close();
    },
  );
});
