/**
 * Child processes of the local mode: spawning, stopping with a deadline, and a registry of
 * pids on disk so a controller restarted after a crash can stop what its predecessor left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';

export interface Spawned {
  readonly child: ChildProcess;
  /** Resolves with the exit code (or 128 + signal number style: null code → -1). */
  readonly exited: Promise<number>;
  /**
   * With `ready`: true once the process printed its ready line on stdout, false if it exited
   * first. Without: true at once.
   */
  readonly ready: Promise<boolean>;
}

import { READY_LINE } from './trainer/ready';

export function spawnNode(opts: {
  script: string;
  args?: readonly string[];
  env: NodeJS.ProcessEnv;
  stderrFile?: string;
  /** Watch stdout for {@link READY_LINE}. */
  ready?: boolean;
}): Spawned {
  const err = opts.stderrFile ? openSync(opts.stderrFile, 'a') : 'ignore';
  const child = spawn(process.execPath, [opts.script, ...(opts.args ?? [])], {
    env: opts.env,
    stdio: ['ignore', opts.ready ? 'pipe' : 'ignore', err],
    // A process group of its own: Ctrl-C on the terminal reaches the controller only, which then
    // stops tasks in order (trainers checkpoint, sidecars drain) instead of everything dying at once.
    detached: true,
  });
  // The child holds its own copy of the descriptor; ours would leak one per spawned task.
  if (typeof err === 'number') closeSync(err);
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (code) => resolve(code ?? -1));
    child.once('error', () => resolve(-1));
  });
  const ready = opts.ready ? readyOf(child, exited) : Promise.resolve(true);
  return { child, exited, ready };
}

function readyOf(child: ChildProcess, exited: Promise<number>): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen = (seen + chunk.toString('utf8')).slice(-256);
      if (!seen.includes(READY_LINE)) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume(); // keep draining: a full pipe would block the child
      resolve(true);
    };
    child.stdout?.on('data', onData);
    void exited.then(() => resolve(false));
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function stopProcess(p: Spawned, graceMs = 5000): Promise<number> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.exited;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  const code = await p.exited;
  clearTimeout(timer);
  return code;
}

/** Waits for a process to exit on its own for up to `ms`, then stops it. */
export async function awaitOrStop(p: Spawned, ms: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
  const r = await Promise.race([p.exited, timeout]);
  clearTimeout(timer);
  return r === 'timeout' ? stopProcess(p) : r;
}

/**
 * Null once every process printed its ready line; otherwise why not: one exited first, the limit
 * passed, or the signal aborted. Like pods reaching Running: the first failure answers at once.
 */
export async function waitAllReady(
  processes: readonly { readonly name: string; readonly process: Spawned }[],
  limitMs: number,
  signal?: AbortSignal,
): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const stop = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`the tasks did not run within ${limitMs / 1000} s`), limitMs);
    signal?.addEventListener('abort', () => resolve(`aborted: ${String(signal.reason)}`), { once: true });
  });
  const each = processes.map(async ({ name, process: p }) =>
    (await p.ready) ? null : `${name} exited with code ${await p.exited} before it ran`,
  );
  const all = Promise.all(each).then((r) => r.find((x) => x !== null) ?? null);
  const failed = Promise.race(
    each.map((p) => p.then((r) => (r === null ? new Promise<never>(() => {}) : r))),
  );
  try {
    return await Promise.race([all, failed, stop]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a process of the run is: a task's trainer or a worker's sidecar (the broker is kept apart). */
export type ProcessKind = 'task' | 'sidecar';

/** The pids this controller started, persisted so a successor can clean up after a crash. */
export class PidRegistry {
  private readonly pids = new Map<number, { what: string; kind: ProcessKind }>();

  constructor(private readonly file: string) {}

  add(pid: number | undefined, what: string, kind: ProcessKind = 'task'): void {
    if (pid === undefined) return;
    this.pids.set(pid, { what, kind });
    this.flush();
  }

  delete(pid: number | undefined): void {
    if (pid === undefined || !this.pids.delete(pid)) return;
    this.flush();
  }

  /** How many registered processes of each kind are alive now. */
  alive(): Record<ProcessKind, number> {
    const out: Record<ProcessKind, number> = { task: 0, sidecar: 0 };
    for (const [pid, p] of this.pids) if (isAlive(pid)) out[p.kind] += 1;
    return out;
  }

  /**
   * Sends `sig` to every registered process that is still alive (its whole process group: each
   * was started detached, as a group leader); returns how many of each kind it signalled.
   */
  signalAll(sig: NodeJS.Signals): Record<ProcessKind, number> {
    const out: Record<ProcessKind, number> = { task: 0, sidecar: 0 };
    for (const [pid, p] of this.pids) {
      if (!isAlive(pid)) continue;
      signalGroup(pid, sig);
      out[p.kind] += 1;
    }
    return out;
  }

  /** Stops processes a crashed predecessor left running (only those whose command line is ours). */
  async reapOrphans(marker: string): Promise<number> {
    const alive = recordedPids(this.file).filter((pid) => isOurs(pid, marker));
    for (const pid of alive) signal(pid, 'SIGTERM');
    const deadline = Date.now() + 5000;
    while (alive.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const pid of alive) if (isAlive(pid)) signal(pid, 'SIGKILL');
    this.flush();
    return alive.length;
  }

  private flush(): void {
    writeFileSync(this.file, JSON.stringify([...this.pids].map(([pid, p]) => [pid, p.what, p.kind])));
  }
}

/**
 * SIGKILLs, synchronously, every process the registry file lists that still carries `marker`:
 * the last resort of a controller that crashed or exits without having stopped its children
 * (it works from the file, so it needs nothing of the run's state in memory).
 */
export function killRecorded(file: string, marker: string): number {
  const ours = recordedPids(file).filter((pid) => isOurs(pid, marker));
  for (const pid of ours) signalGroup(pid, 'SIGKILL');
  return ours.length;
}

function recordedPids(file: string): number[] {
  if (!existsSync(file)) return [];
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as [number, ...unknown[]][]).map(([pid]) => pid);
  } catch {
    return [];
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (dead, not yet reaped by its parent) still answers signal 0.
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** True when process `pid` is alive and carries `marker` in its environment or command line. */
export function isOurs(pid: number, marker: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return (
      readFileSync(`/proc/${pid}/environ`, 'utf8').includes(marker) ||
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)
    );
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/** The process group first (a detached child leads its own), the process itself if that fails. */
function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    signal(pid, sig);
  }
}
