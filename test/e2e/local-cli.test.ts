/**
 * The local mode's command line at its edges, as a new user meets it: bad or busy ports, signals,
 * a wrapper process that dies, a second start after a finished run, output that is not a terminal.
 * Every test checks that nothing of the run is left running afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Overview } from '../../controller/src/dashboard/job-rows';
import { jobSpecSchema } from '../../controller/src/runtime/job-spec';
import { newJobRecord } from '../../controller/src/runtime/job-record';
import { SMALL_WORKLOAD } from '../../controller/src/local/demo-workload';
import { nothingLeft, processesOf, REPO, runCli, until } from './helpers';

const dirs: string[] = [];
const children: ChildProcess[] = [];
const stateDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'optimus-cli-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function start(args: readonly string[]) {
  const r = runCli(args);
  children.push(r.child);
  return r;
}

/** The API base URL, from the line the CLI prints once the run is ready. */
async function apiOf(stderr: () => string): Promise<string> {
  let url = '';
  await until(
    'the API line',
    () => {
      url = /API (http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/jobs/.exec(stderr())?.[1] ?? '';
      return url !== '';
    },
    90_000,
  );
  return url;
}

/** The run's token is in its state directory (`api-token`, 0600), as the CLI and tools find it. */
const overview = async (api: string, dir: string) =>
  (
    await fetch(`${api}/api/v1/overview`, {
      headers: { authorization: `Bearer ${readFileSync(join(dir, 'api-token'), 'utf8').trim()}` },
    })
  ).json() as Promise<Overview>;

describe('local mode command line', () => {
  it('a busy --port is one clear line, exit 1, and nothing left running', async () => {
    const dir = stateDir();
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const r = start(['--workload', 'small', '--port', String(port), '--state-dir', dir]);
      expect(await r.exit).toBe(1);
      const lines = r.stderr().trim().split('\n');
      expect(lines).toEqual([
        `optimus: cannot listen on 127.0.0.1:${port}: the port is already in use (--port or OPTIMUS_HTTP_PORT; 0 picks a free port)`,
      ]);
      await nothingLeft(dir);
    } finally {
      blocker.close();
    }
  }, 60_000);

  it.each([['70000'], ['abc'], ['-1']])(
    'an invalid --port %s is one clear line, the pointer to --help, and exit 1',
    async (port) => {
      const dir = stateDir();
      const r = start(['--port', port, '--state-dir', dir]);
      expect(await r.exit).toBe(1);
      const lines = r.stderr().trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^optimus local: .*--port/);
      expect(lines[1]).toBe("See 'optimus local --help'.");
      expect(processesOf(dir)).toEqual([]);
    },
  );

  it('SIGHUP stops the run like Ctrl-C; output that is not a terminal gets one line per change', async () => {
    const dir = stateDir();
    const r = start(['--workload', 'small', '--port', '0', '--state-dir', dir, '--time-scale', '30']);
    const api = await apiOf(r.stderr);
    await until(
      'a job running',
      async () => (await overview(api, dir)).jobs.some((j) => j.shape !== null),
      60_000,
    );
    r.child.kill('SIGHUP');
    expect(await r.exit).toBe(0);
    expect(r.stderr()).toContain('optimus local: SIGHUP, shutting down');
    // Plain change lines, e.g. "[   1 min 3 s] alpha: pre-run 1×1 (pre-run: measuring speed …)".
    expect(r.stderr()).toMatch(/^\[ *[\d a-z]+\] alpha: (pending|pre-run|resizing|running) /m);
    expect(r.stderr()).not.toContain('\x1b[');
    await nothingLeft(dir);
  }, 120_000);

  it('the npm/tsx wrapper dying (SIGKILL) stops the run and everything in it', async () => {
    const dir = stateDir();
    const wrapper = spawn(
      process.execPath,
      [join(REPO, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'controller/src/cli/main.ts', 'local'].concat([
        '--workload',
        'small',
        '--port',
        '0',
        '--state-dir',
        dir,
        '--time-scale',
        '30',
      ]),
      { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, OPTIMUS_LOG_LEVEL: 'warn' } },
    );
    children.push(wrapper);
    let err = '';
    wrapper.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const api = await apiOf(() => err);
    await until(
      'a job running',
      async () => (await overview(api, dir)).jobs.some((j) => j.shape !== null),
      60_000,
    );
    expect(processesOf(dir, { exceptBroker: true }).length).toBeGreaterThan(2);
    wrapper.kill('SIGKILL');
    // The controller notices, checkpoints the jobs, drains the sidecars and stops the broker.
    await nothingLeft(dir);
    expect(err).toContain('the npm/tsx process that started us exited, shutting down');
  }, 120_000);

  it('a controller killed with SIGKILL leaves no trainer or sidecar running', async () => {
    const dir = stateDir();
    const r = start(['--workload', 'small', '--port', '0', '--state-dir', dir, '--time-scale', '30']);
    const api = await apiOf(r.stderr);
    await until(
      'a job running',
      async () => (await overview(api, dir)).jobs.some((j) => j.shape !== null),
      60_000,
    );
    r.child.kill('SIGKILL');
    await r.exit;
    // Tasks watch their parent; the broker stays a minute for a restarted controller (ADR 0006).
    await nothingLeft(dir, { exceptBroker: true });
    // Cleaned up here rather than waited for: the next run on this directory would reuse it.
    for (const p of processesOf(dir)) process.kill(Number(p.split(' ')[0]), 'SIGTERM');
    await nothingLeft(dir);
  }, 120_000);

  it('a second start after a finished run starts a new run and says so in one line', async () => {
    const dir = stateDir();
    mkdirSync(join(dir, 'store'), { recursive: true });
    const jobs = SMALL_WORKLOAD.map((w) => ({
      ...newJobRecord(jobSpecSchema.parse(w.spec), w.arrival, 'old'),
      phase: 'done',
      finishedAt: 900,
    }));
    writeFileSync(
      join(dir, 'store', 'state.json'),
      JSON.stringify({ v: 1, originMs: Date.now() - 60_000, decisions: 9, jobs }),
    );
    const r = start(['--workload', 'small', '--port', '0', '--state-dir', dir, '--time-scale', '30']);
    const api = await apiOf(r.stderr);
    expect(r.stderr()).toContain(
      `optimus local: the run in ${dir} had finished (3 jobs); starting a new one`,
    );
    await until(
      'the new run submitted its jobs',
      async () => (await overview(api, dir)).jobs.length >= 2,
      30_000,
    );
    expect((await overview(api, dir)).jobs.every((j) => j.phase !== 'done')).toBe(true);
    r.child.kill('SIGINT');
    expect(await r.exit).toBe(0);
    await nothingLeft(dir);
  }, 120_000);

  it('--exit-when-done without --json prints a readable summary on stdout', async () => {
    const dir = stateDir();
    const r = start([
      '--workload',
      'small',
      '--port',
      '0',
      '--state-dir',
      dir,
      '--time-scale',
      '40',
      '--exit-when-done',
    ]);
    expect(await r.exit).toBe(0);
    const out = await r.stdout;
    expect(out).toMatch(/^3 jobs of 3 finished, \d+ decisions:$/m);
    for (const w of SMALL_WORKLOAD) expect(out).toMatch(new RegExp(`^  ${w.spec.name} +JCT \\d`, 'm'));
    expect(out).toMatch(/^average JCT \d.*, makespan \d.* \(job seconds\)$/m);
    expect(() => JSON.parse(out) as unknown).toThrow();
    await nothingLeft(dir);
  }, 180_000);
});
