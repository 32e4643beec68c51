/**
 * Faults at the sidecar's end, against the real controller (local mode, embedded broker): the test
 * plays the training — writes the log, one traceable line per record — and kills, restarts, rotates,
 * truncates and starves the real sidecar bundle of disk. The tasks are parameter servers of a job the
 * controller runs, so their records are stored like any other. After each fault: every line the
 * sidecar could read is stored exactly once, and no seq went over the wire with two contents.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, sleep, until } from './harness/children';
import {
  killLocalProcesses,
  observerAuth,
  startLocal,
  storedRecords,
  submit,
  taskAuth,
  type LocalController,
} from './harness/local-mode';
import { smallDisk } from './harness/small-disk';
import { recordFault } from './harness/tally';
import { expectAllStored, TestTask } from './harness/task';
import { spyOnWire, type WireSpy } from './harness/wire-spy';

const root = mkdtempSync(join(tmpdir(), 'fault-sidecar-'));
const stateDir = join(root, 'controller');
let controller: LocalController;
let broker = '';
let spy: WireSpy;
const JOB = {
  name: 'telemetry',
  batchSize: 64,
  stepsPerEpoch: 1000,
  maxEpochs: 50,
  psDemand: { cpu: 1 },
  workerDemand: { cpu: 1 },
  maxPs: 1,
  maxWorkers: 1,
};

beforeAll(async () => {
  controller = startLocal(stateDir, ['--workload', 'none', '--time-scale', '5', '--fresh']);
  await submit(await controller.api(), JOB);
  broker = await controller.broker();
  spy = await spyOnWire(broker, observerAuth(stateDir));
}, 120_000);

afterAll(async () => {
  // Processes first: a failing close must not leave the controller running.
  killLocalProcesses(stateDir);
  await killAll();
  await spy?.close().catch(() => undefined);
  if (process.env['OPTIMUS_FAULTS_KEEP'] !== '1') rmSync(root, { recursive: true, force: true });
});

/** A task with its own broker identity, handed to its sidecar as the local mode does (user name + password file). */
function task(index: number, env: NodeJS.ProcessEnv = {}, state?: string): TestTask {
  const id = { namespace: 'default', job: JOB.name, role: 'ps' as const, index };
  const dir = join(root, `ps-${index}`);
  mkdirSync(dir, { recursive: true });
  const { username, password } = taskAuth(stateDir, id);
  writeFileSync(join(dir, 'broker.password'), password, { mode: 0o600 });
  const auth = {
    OPTIMUS_BROKER_USERNAME: username,
    OPTIMUS_BROKER_PASSWORD_FILE: join(dir, 'broker.password'),
  };
  return new TestTask(id, dir, broker, state, { ...auth, ...env });
}

async function expectDelivered(t: TestTask, row: string): Promise<void> {
  await until(
    `${t.key} stored`,
    () => (storedRecords(stateDir).get(t.key)?.size ?? 0) >= t.written.length,
    60_000,
  );
  expect(await t.finish()).toBe(0);
  const stored = storedRecords(stateDir).get(t.key);
  expectAllStored(t, stored);
  const conflicts = spy.conflicts().filter((c) => c.startsWith(t.key));
  expect(conflicts).toEqual([]);
  recordFault({
    row,
    sent: t.written.length,
    received: stored?.size ?? 0,
    lost: t.written.length - (stored?.size ?? 0),
    reused: conflicts.length,
  });
}

/** Writes `lines` lines in bursts of `burst` every `everyMs`, calling `during(i)` between bursts. */
async function stream(
  t: TestTask,
  lines: number,
  burst: number,
  everyMs: number,
  during: (i: number) => Promise<void> = async () => {},
): Promise<void> {
  for (let i = 0; i * burst < lines; i++) {
    t.write(Math.min(burst, lines - i * burst));
    await during(i);
    await sleep(everyMs);
  }
}

describe('sidecar faults', () => {
  it('the sidecar killed (kill -9) three times while lines stream in: nothing lost, no seq reused', async () => {
    const t = task(0);
    t.start();
    await stream(t, 600, 5, 15, async (i) => {
      if (i % 40 === 20) {
        await t.sidecar?.kill9();
        await sleep(200);
        t.start();
      }
    });
    await expectDelivered(t, 'sidecar kill -9 (×3)');
  });

  it('the log rotated (rename + new file) and truncated (copytruncate): nothing lost', async () => {
    const t = task(1);
    t.start();
    await stream(t, 100, 5, 10);
    t.rotate();
    await stream(t, 100, 5, 10);
    t.rotate();
    await stream(t, 100, 5, 10);
    // copytruncate loses what was written between the copy and the cut; the test cuts only once the
    // sidecar has read everything, so every written line is one it could read.
    await until(
      'read before the cut',
      () => (storedRecords(stateDir).get(t.key)?.size ?? 0) >= t.written.length,
      30_000,
    );
    t.truncate();
    await sleep(500);
    await stream(t, 100, 5, 10);
    await expectDelivered(t, 'log rotated and truncated');
  });

  it('the state disk full (ENOSPC), the sidecar killed while it is: it survives, reuses no seq, loses nothing', async () => {
    const disk = smallDisk(root);
    try {
      const t = task(2, {}, join(disk.dir, 'state'));
      t.start({}, disk.nodeArgs);
      await stream(t, 100, 5, 10);
      disk.fill();
      await stream(t, 100, 5, 10); // read until the outbox refuses, then paused: the log holds the rest
      await until(
        'the sidecar notices',
        () => /cannot write the outbox/.test(t.sidecar?.stderr() ?? ''),
        20_000,
      );
      expect(t.sidecar?.proc.exitCode, 'the sidecar is still running').toBeNull();
      await t.sidecar?.kill9(); // and a restart on the full disk
      t.start({}, disk.nodeArgs);
      await stream(t, 50, 5, 10);
      await sleep(1500);
      expect(t.sidecar?.proc.exitCode, 'restarted on a full disk, still running').toBeNull();
      disk.free();
      await stream(t, 50, 5, 10);
      await expectDelivered(t, `state disk full (${disk.kind})`);
    } finally {
      disk.close();
    }
  });
});
