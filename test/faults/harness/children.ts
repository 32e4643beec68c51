/**
 * Every process a fault test starts goes through here, so none outlives the suite: `killAll` in an
 * `afterAll` stops what a failed or timed-out test left (process groups: a local-mode controller's
 * trainers and sidecars go with it).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

export interface Child {
  readonly proc: ChildProcess;
  readonly exit: Promise<number>;
  /** The last 64 KiB of stderr. */
  stderr(): string;
  /** Everything written to stdout (up to 1 MiB). */
  stdout(): string;
  /** Resolves with the first stderr match of `re` (or rejects after `ms`). */
  waitFor(re: RegExp, ms: number): Promise<RegExpExecArray>;
  kill9(): Promise<number>;
}

const live = new Set<ChildProcess>();

export function start(cmd: string, args: readonly string[], opts: SpawnOptions = {}): Child {
  const proc = spawn(cmd, [...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...opts });
  live.add(proc);
  let err = '';
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  proc.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-65_536);
    for (const w of [...waiters]) {
      const m = w.re.exec(err);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(0, 1 << 20)));
  const exit = new Promise<number>((r) =>
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      r(code ?? (signal === 'SIGKILL' ? 137 : 128));
    }),
  );
  return {
    proc,
    exit,
    stderr: () => err,
    stdout: () => out,
    waitFor: (re, ms) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const m = re.exec(err);
        if (m) return resolve(m);
        const t = setTimeout(
          () => reject(new Error(`timed out waiting for ${re}; stderr:\n${err.slice(-3000)}`)),
          ms,
        );
        waiters.push({ re, resolve: (x) => (clearTimeout(t), resolve(x)) });
      }),
    kill9: async () => {
      proc.kill('SIGKILL');
      return exit;
    },
  };
}

/** SIGKILLs every process group still running (the suite's last resort). */
export async function killAll(): Promise<void> {
  for (const p of live) {
    try {
      if (p.pid !== undefined) process.kill(-p.pid, 'SIGKILL');
    } catch {
      p.kill('SIGKILL');
    }
  }
  await new Promise((r) => setTimeout(r, 200));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
