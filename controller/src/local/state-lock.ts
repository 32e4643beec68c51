/**
 * An exclusive lock on a local-mode state directory (ADR 0032): one run per directory. A second
 * `optimus local` on the same directory is told who holds it (pid, start time, command) and stops
 * before it touches anything; a lock whose holder is dead is taken over at once.
 *
 * Hand-written rather than proper-lockfile: that package judges a lock stale by the age of its
 * mtime, so a holder killed with `kill -9` blocks a restart for the stale period, and a holder
 * whose event loop stalls longer than that (a loaded 2-core machine) loses its lock to a second
 * run — two writers, the very bug. Here liveness is the holder's pid, checked against its start
 * time so a reused pid is not taken for the holder. Local file systems only (pids are per host);
 * a lock written on another host is never judged stale.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { fsyncDirectory } from './file-store-fsync';

export const LOCK_FILE = 'lock';

const holderSchema = z.object({
  pid: z.number().int().positive(),
  /** Wall-clock start of the holder, for people. */
  startedAt: z.string(),
  /** The holder's start in clock ticks since boot (`/proc/<pid>/stat`), null where unknown: tells a reused pid apart. */
  procStart: z.string().nullable(),
  command: z.string(),
  host: z.string(),
});
export type LockHolder = z.infer<typeof holderSchema>;

/** The directory is locked by a live process (or by one on another host). */
export class StateDirLocked extends Error {
  override readonly name = 'StateDirLocked';
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
    super(
      `the state directory ${dir} is in use by pid ${holder.pid}${where} (started ${holder.startedAt}, ` +
        `command: ${holder.command}); stop that run first, or give this one another --state-dir`,
    );
  }
}

export interface StateLock {
  readonly file: string;
  /** True while the lock file still names this process (nobody removed or took it). */
  held(): boolean;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

/** How long an unreadable lock file may be someone's lock being written before it counts as torn. */
const UNREADABLE_GRACE_MS = 2000;
const ATTEMPTS = 20;

/**
 * Takes the lock of `dir` (created if needed) or throws {@link StateDirLocked}.
 *
 * @example
 * const lock = lockStateDir('.optimus/local');
 * try { … } finally { lock.release(); }
 */
export function lockStateDir(dir: string, o: { command?: string } = {}): StateLock {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  const me = self(o.command);
  const text = JSON.stringify(me);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (tryCreate(file, text)) {
      fsyncDirectory(dir);
      return ownLock(file, me);
    }
    const current = readLockFile(file);
    if (current === 'missing') continue;
    if (current === 'unreadable') {
      // Created a moment ago by a starter that has not written it yet, or torn by a crash then.
      if (ageMs(file) < UNREADABLE_GRACE_MS) {
        sleep(50);
        continue;
      }
    } else if (alive(current.holder)) throw new StateDirLocked(dir, current.holder);
    takeOver(file, current === 'unreadable' ? null : current.text);
  }
  throw new Error(`could not take the lock ${file} (${ATTEMPTS} attempts raced with other starts)`);
}

/** Empties `dir` (`--fresh`) but keeps its lock, so the directory stays ours while it is cleared. */
export function clearStateDir(dir: string, lock: StateLock): void {
  if (!lock.held()) throw new Error(`not holding the lock of ${dir}`);
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir))
    if (name !== LOCK_FILE) rmSync(join(dir, name), { recursive: true, force: true });
}

function ownLock(file: string, me: LockHolder): StateLock {
  let released = false;
  const ours = (): boolean => {
    const c = readLockFile(file);
    return typeof c === 'object' && c.holder.pid === me.pid && c.holder.procStart === me.procStart;
  };
  return {
    file,
    held: () => !released && ours(),
    release: () => {
      if (released) return;
      released = true;
      if (ours()) rmSync(file, { force: true });
    },
  };
}

function tryCreate(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

type LockFileState = 'missing' | 'unreadable' | { readonly holder: LockHolder; readonly text: string };

function readLockFile(file: string): LockFileState {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
  try {
    const holder = holderSchema.safeParse(JSON.parse(text));
    return holder.success ? { holder: holder.data, text } : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * Removes a stale lock without removing a live one that replaced it meanwhile: the file is renamed
 * aside (atomic), and if what was moved is not the stale lock we judged (another starter took over
 * first and wrote its own), it is linked back (`link` fails if yet another lock appeared: then that
 * one stands, and the loop reads it).
 */
function takeOver(file: string, staleText: string | null): void {
  const aside = `${file}.stale-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = readLockFile(aside);
  const wasStale =
    staleText === null ? moved === 'unreadable' : typeof moved === 'object' && moved.text === staleText;
  if (!wasStale) {
    try {
      linkSync(aside, file);
    } catch {
      // a third lock appeared in between: it stands
    }
  }
  unlinkSync(aside);
}

/** Whether the holder still runs: its pid exists, is not a zombie, and started when it said. */
export function alive(h: LockHolder): boolean {
  if (h.host !== hostname()) return true;
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(h.pid);
  if (stat === null) return true; // no /proc (macOS): the pid is all we know
  if (stat.state === 'Z') return false;
  return h.procStart === null || stat.start === h.procStart;
}

function procStat(pid: number): { state: string; start: string } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so fields count from the last `)`.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Field 3 (state) is fields[0]; field 22 (starttime) is fields[19].
  return { state: fields[0] ?? '', start: fields[19] ?? '' };
}

function self(command: string | undefined): LockHolder {
  return {
    pid: process.pid,
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    procStart: procStat(process.pid)?.start ?? null,
    command: (command ?? process.argv.slice(1).join(' ')).slice(0, 500),
    host: hostname(),
  };
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
