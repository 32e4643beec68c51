/**
 * The controller killed (`kill -9`) once, and twice in a row — the second time while the restarted
 * controller recovers — in local mode with its embedded broker, real trainers and sidecars. Sidecars
 * keep publishing while no controller runs, so records queue at the broker for the controller's
 * persistent session. Afterwards: every record each sidecar numbered is stored, none under two seqs,
 * and no seq went over the wire with two contents.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killAll, sleep, until } from './harness/children';
import { killLocalProcesses, observerAuth, startLocal, storedRecords, taskAuth } from './harness/local-mode';
import { publishForgetfully } from './harness/forgetful-publisher';
import { spyOnWire, type WireSpy } from './harness/wire-spy';

/** A parameter-server task of the workload's job `alpha` that no local sidecar plays. */
const FORGETFUL = { namespace: 'default', job: 'alpha', role: 'ps', index: 7 } as const;
const RECOVERY_KILL_MS = 300;
import { recordFault } from './harness/tally';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) killLocalProcesses(d);
  await killAll();
  // OPTIMUS_FAULTS_KEEP=1 keeps the state directories (logs, store, broker.stderr.log) to read.
  if (!process.env['OPTIMUS_FAULTS_KEEP']) for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const total = (dir: string): number => [...storedRecords(dir).values()].reduce((n, m) => n + m.size, 0);

interface Summary {
  jobs: { name: string; jct: number | null }[];
  messages: { received: number; rejected: number; lost: number; duplicates: number };
}

async function runToEnd(dir: string, spy: WireSpy | null, row: string): Promise<Summary> {
  const last = startLocal(dir, ['--workload', 'small', '--time-scale', '30', '--exit-when-done', '--json']);
  const code = await last.child.exit;
  expect({ code, stderr: code === 0 ? '' : last.child.stderr().slice(-3000) }).toEqual({
    code: 0,
    stderr: '',
  });
  const out = last.child.stdout();
  const summary = JSON.parse(out) as Summary;
  expect(summary.messages.lost).toBe(0);
  for (const j of summary.jobs) expect(j.jct, j.name).toBeGreaterThan(0);
  // Stored once each: storedRecords throws on a seq stored twice.
  expect(total(dir)).toBe(summary.messages.received);
  expect(spy?.conflicts() ?? []).toEqual([]);
  recordFault({
    row,
    sent: summary.messages.received + summary.messages.lost,
    received: summary.messages.received,
    lost: summary.messages.lost,
    reused: spy?.conflicts().length ?? 0,
  });
  return summary;
}

describe('controller kill -9', () => {
  it('once, mid-run: nothing lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fault-ctl1-'));
    dirs.push(dir);
    const first = startLocal(dir, ['--workload', 'small', '--time-scale', '30', '--fresh']);
    const spy = await spyOnWire(await first.broker(), observerAuth(dir));
    await until('observations', () => total(dir) >= 150, 90_000);
    await first.child.kill9();
    await sleep(1500); // sidecars keep publishing into the controller's queue
    await runToEnd(dir, spy, 'controller kill -9 once');
    await spy.close();
  });

  it('twice in a row, the second while the restarted controller recovers: nothing lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fault-ctl2-'));
    dirs.push(dir);
    const first = startLocal(dir, ['--workload', 'small', '--time-scale', '30', '--fresh']);
    const broker = await first.broker();
    const spy = await spyOnWire(broker, observerAuth(dir));
    const forgetful = await publishForgetfully(broker, FORGETFUL, 20, taskAuth(dir, FORGETFUL));
    await until('observations', () => total(dir) >= 150, 90_000);
    await first.child.kill9();
    await sleep(2000); // a queue builds up at the broker
    const restartedAt = Date.now();
    const second = startLocal(dir, ['--workload', 'small', '--time-scale', '30']);
    // Killed while it recovers: just after it connected to the broker (its `online` birth message),
    // while it takes over the records queued for it.
    await spy.controllerOnline(restartedAt, 60_000);
    await sleep(RECOVERY_KILL_MS);
    expect(second.child.proc.exitCode, 'still running').toBeNull();
    await second.child.kill9();
    await sleep(1000);
    await forgetful.stop();
    await runToEnd(dir, spy, 'controller kill -9 twice in a row');
    await spy.close();
    // Acknowledged by the broker and never resent: only a controller that stores before it
    // acknowledges keeps these.
    const kept = storedRecords(dir).get('default/alpha/ps/7') ?? new Map();
    const missing = forgetful.acknowledged.filter((s) => !kept.has(s));
    expect({ acknowledged: forgetful.acknowledged.length, missing }).toEqual({
      acknowledged: forgetful.acknowledged.length,
      missing: [],
    });
  });
});
