/**
 * End to end: a controller killed (SIGKILL) mid-run and started again on the same state
 * loses no job and no observation, and the run still completes with every record received.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SMALL_WORKLOAD } from '../../controller/src/local/demo-workload';
import { runCli, until } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'optimus-restart-'));
const recordsFile = join(dir, 'store', 'records.jsonl');
const lines = (): string[] =>
  existsSync(recordsFile)
    ? readFileSync(recordsFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
const storedJobs = (): string[] => {
  const f = join(dir, 'store', 'state.json');
  return existsSync(f)
    ? (JSON.parse(readFileSync(f, 'utf8')) as { jobs: { spec: { name: string } }[] }).jobs
        .map((j) => j.spec.name)
        .sort()
    : [];
};

const children: ChildProcess[] = [];
afterAll(async () => {
  // A failed or timed-out run must not outlive the test: stop it; its trainers stop with it.
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
});

describe('controller restart', () => {
  it('a controller killed mid-run and restarted loses no job or observation', async () => {
    const common = ['--workload', 'small', '--state-dir', dir, '--port', '0', '--time-scale', '30'];
    const first = runCli([...common, '--fresh']);
    children.push(first.child);
    try {
      await until('jobs with observations', () => lines().length >= 120 && storedJobs().length >= 2, 60_000);
    } finally {
      first.child.kill('SIGKILL');
    }
    await first.exit;
    const before = lines();
    const jobsBefore = storedJobs();

    const second = runCli([...common, '--exit-when-done', '--json']);
    children.push(second.child);
    const code = await second.exit;
    expect({ code, stderr: code === 0 ? '' : second.stderr() }).toEqual({ code: 0, stderr: '' });
    const summary = JSON.parse(await second.stdout) as {
      jobs: { name: string; jct: number | null }[];
      messages: { received: number; rejected: number; lost: number };
    };
    // Every job known before the kill is still there, and all of the workload finished.
    for (const name of jobsBefore) expect(summary.jobs.map((j) => j.name)).toContain(name);
    expect(summary.jobs.map((j) => j.name).sort()).toEqual(SMALL_WORKLOAD.map((j) => j.spec.name).sort());
    for (const j of summary.jobs) expect(j.jct).toBeGreaterThan(0);
    // Every observation accepted before the kill is still there, in order, and counted.
    const after = lines();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(summary.messages.received).toBe(after.length);
    expect(summary.messages.lost).toBe(0);
  }, 240_000);
});
