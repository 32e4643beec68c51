/**
 * Every ending of a local run with real processes, as a person meets them (ADR 0033): Ctrl-C in a
 * terminal under `npm start` (the terminal, npm and tsx each deliver the signal), a closed
 * terminal, SIGTERM with a relayed copy mid-drain, a SIGTERM repeated by someone impatient, a drain
 * that cannot finish, and a crash. On each, nothing of the run is alive 2 s after the controller
 * has exited, and the run says in its last line what it stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Overview } from '../../controller/src/dashboard/job-rows';
import { isRunning, processesOf, REPO, sleep, until } from './helpers';

/** The promise: within this long after the controller exits, nothing of its run is left. */
const AFTER_EXIT_MS = 2000;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const d of dirs) for (const p of processesOf(d)) process.kill(Number(p.split(' ')[0]), 'SIGKILL');
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await sleep(300);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const stateDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'optimus-signals-'));
  dirs.push(d);
  return d;
};

interface Started {
  readonly child: ChildProcess;
  /** Everything it wrote (a terminal's output when run under `script`). */
  output(): string;
  readonly exit: Promise<number>;
}

function track(child: ChildProcess): Started {
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number>((r) => child.once('exit', (code, sig) => r(code ?? (sig ? -1 : 0))));
  return { child, output: () => out, exit };
}

const RUN_FLAGS = (dir: string) => [
  '--workload',
  'small',
  '--port',
  '0',
  '--state-dir',
  dir,
  '--time-scale',
  '30',
];

/** `npm start` on a terminal of its own (util-linux `script` gives it a pty); our stdin is its keyboard. */
function npmStartOnTerminal(dir: string, npm = 'npm start --'): Started {
  const cmd = `${npm} ${RUN_FLAGS(dir).join(' ')}`;
  return track(
    spawn('script', ['-qfec', cmd, '/dev/null'], {
      cwd: REPO,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: process.env,
    }),
  );
}

/** The controller alone (no wrapper), optionally with a module preloaded. */
function controller(dir: string, preload: readonly string[] = []): Started {
  const args = [...preload.flatMap((p) => ['--import', p]), '--import', 'tsx', 'controller/src/cli/main.ts'];
  return track(
    spawn(process.execPath, [...args, 'local', ...RUN_FLAGS(dir)], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    }),
  );
}

/** Once the run is ready and one of its jobs runs: the controller's pid and API. */
async function running(s: Started, dir: string): Promise<{ pid: number; api: string }> {
  let api = '';
  await until(
    'the API line',
    () => (api = /API (http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/jobs/.exec(s.output())?.[1] ?? '') !== '',
    90_000,
  );
  await until(
    'a job running with its sidecars',
    async () => {
      // The run's token is in its state directory (ADR 0031).
      const token = readFileSync(join(dir, 'api-token'), 'utf8').trim();
      const res = await fetch(`${api}/api/v1/overview`, { headers: { authorization: `Bearer ${token}` } });
      const o = (await res.json()) as Overview;
      return o.jobs.some((j) => j.shape !== null && j.phase === 'running');
    },
    90_000,
  );
  const pid = controllerPid(dir);
  expect(processesOf(dir).length).toBeGreaterThan(4);
  return { pid, api };
}

/** The controller process of a run: the node process whose command line runs the local command for `dir`. */
function controllerPid(dir: string): number {
  for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (!cmd[0]?.endsWith('node') || !cmd.includes(dir)) continue;
      if (cmd.some((a) => a.endsWith('npm-start.mjs') || a.endsWith('cli/main.ts'))) return Number(p);
    } catch {
      // gone
    }
  }
  throw new Error(`no controller process for ${dir}`);
}

/** Waits for the controller to exit, then checks that nothing of the run outlives it by more than 2 s. */
async function nothingOutlives(pid: number, dir: string, withinMs = 60_000): Promise<void> {
  await until(`controller ${pid} exited`, () => !isRunning(pid), withinMs);
  const deadline = Date.now() + AFTER_EXIT_MS;
  while (processesOf(dir).length > 0 && Date.now() < deadline) await sleep(100);
  expect(processesOf(dir)).toEqual([]);
}

const STOPPED = /optimus local: stopped \d+ tasks?, \d+ sidecars? and the broker in [\d.]+ s/;

describe('local run endings with real processes', () => {
  it.each([['npm start --'], ['npm run optimus -- local']])(
    'Ctrl-C on a terminal under `%s`: stops in order, says what it stopped, leaves nothing',
    async (npm) => {
      const dir = stateDir();
      const s = npmStartOnTerminal(dir, npm);
      const { pid } = await running(s, dir);
      s.child.stdin!.write('\x03'); // the terminal turns it into SIGINT for npm, sh and the controller
      await nothingOutlives(pid, dir);
      const out = s.output();
      expect(out).toContain('optimus local: SIGINT, shutting down');
      expect(out).toMatch(STOPPED);
      expect(out).not.toMatch(/killed \d+ process/);
      // The terminal view drew its last frame before the shutdown line, and never after it.
      expect(out.slice(out.indexOf('shutting down'))).not.toContain('\x1b[');
      s.child.stdin!.end();
    },
    180_000,
  );

  it('the terminal closed (SIGHUP to the session, output gone): stops in order and leaves nothing', async () => {
    const dir = stateDir();
    const s = npmStartOnTerminal(dir);
    const { pid } = await running(s, dir);
    s.child.kill('SIGKILL'); // the terminal emulator gone: the kernel hangs up the pty
    await nothingOutlives(pid, dir);
    // Nobody reads the terminal any more; the log says how it ended.
    expect(readFileSync(join(dir, 'controller.log'), 'utf8')).toMatch(/"msg":"stopped"/);
  }, 180_000);

  it('SIGTERM with a relayed copy landing mid-drain: one orderly stop, exit 0', async () => {
    const dir = stateDir();
    const s = controller(dir);
    const { pid } = await running(s, dir);
    s.child.kill('SIGTERM');
    await sleep(150);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    await nothingOutlives(pid, dir);
    expect(s.output().match(/shutting down/g)).toHaveLength(1);
    expect(s.output()).toMatch(STOPPED);
  }, 180_000);

  it('SIGTERM repeated by someone impatient: everything is killed at once, exit 130', async () => {
    const dir = stateDir();
    const s = controller(dir);
    const { pid } = await running(s, dir);
    s.child.kill('SIGTERM');
    await sleep(1500);
    s.child.kill('SIGTERM');
    await nothingOutlives(pid, dir);
    const code = await s.exit;
    // Either the kill came first (130), or the orderly stop had already ended (0, with its line).
    if (code === 130) expect(s.output()).toMatch(/SIGTERM again while stopping; killed \d+ process/);
    else expect([code, STOPPED.test(s.output())]).toEqual([0, true]);
  }, 180_000);

  it('a drain that cannot finish (a frozen sidecar): killed at the 10 s limit, and the last line says so', async () => {
    const dir = stateDir();
    const s = controller(dir);
    const { pid } = await running(s, dir);
    const sidecar = processesOf(dir).find((p) => p.includes('sidecar.cjs'));
    expect(sidecar).toBeDefined();
    process.kill(Number(sidecar!.split(' ')[0]), 'SIGSTOP'); // it cannot drain nor exit on SIGTERM
    const t0 = Date.now();
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    expect(Date.now() - t0).toBeLessThan(20_000); // the 10 s limit, with room for a loaded machine
    await nothingOutlives(pid, dir);
    expect(s.output()).toMatch(/still running at the 10 s limit (was|were) killed/);
  }, 180_000);

  it('a crash (an uncaught exception): every process of the run killed, exit 1, the stack in the log', async () => {
    const dir = stateDir();
    const s = controller(dir, [join(REPO, 'test/e2e/fixtures/crash-on-usr2.mjs')]);
    const { pid } = await running(s, dir);
    s.child.kill('SIGUSR2');
    expect(await s.exit).toBe(1);
    await nothingOutlives(pid, dir);
    expect(s.output()).toMatch(/optimus local: crashed \(injected crash\); killed \d+ processes of the run/);
    expect(readFileSync(join(dir, 'controller.log'), 'utf8')).toMatch(/"msg":"crashed".*injected crash/);
  }, 180_000);
});
