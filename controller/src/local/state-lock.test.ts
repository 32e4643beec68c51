/**
 * The state-directory lock (issue 30, ADR 0032) with real processes: a second `optimus local` on a
 * held directory names the holder and exits 1 having started nothing; a dead holder's lock, a reused
 * pid's and a torn one are taken over; `--fresh` keeps the lock while it clears the directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clearStateDir, lockStateDir, StateDirLocked, type LockHolder } from './state-lock';

const REPO = new URL('../../..', import.meta.url).pathname;
const children: { kill(): void }[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

const holder = (o: Partial<LockHolder>): LockHolder => ({
  pid: 1,
  startedAt: '2026-01-01T00:00:00.000Z',
  procStart: null,
  command: 'old run',
  host: hostname(),
  ...o,
});

/** A real process that takes the lock of `dir` and holds it until killed. */
async function holdInChild(dir: string): Promise<number> {
  const code = `import { lockStateDir } from './controller/src/local/state-lock.ts';
    lockStateDir(process.argv[1], { command: 'optimus local --workload demo' });
    process.stdout.write('locked\\n'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, dir], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push({ kill: () => child.kill('SIGKILL') });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.once('exit', (c) => reject(new Error(`holder exited ${c}`)));
  });
  return child.pid!;
}

describe('state-directory lock', () => {
  it('a second run on a held directory names the holder (pid, start time, command) and exits 1, starting nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    const pid = await holdInChild(dir);
    const second = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'controller/src/cli/main.ts',
        'local',
        '--workload',
        'none',
        '--port',
        '0',
        '--state-dir',
        dir,
      ],
      { cwd: REPO, encoding: 'utf8', timeout: 60_000 },
    );
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`in use by pid ${pid}`);
    expect(second.stderr).toMatch(/started \d{4}-\d\d-\d\dT/);
    expect(second.stderr).toContain('command: optimus local --workload demo');
    // Nothing of the second run was created beside the lock: no broker, no store, no token.
    expect(readdirSync(dir)).toEqual(['lock']);
  }, 90_000);

  it('refuses in the same process too, with the holder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    const lock = lockStateDir(dir, { command: 'first' });
    expect(() => lockStateDir(dir)).toThrow(StateDirLocked);
    try {
      lockStateDir(dir);
    } catch (err) {
      expect((err as StateDirLocked).holder).toMatchObject({ pid: process.pid, command: 'first' });
    }
    lock.release();
    expect(existsSync(join(dir, 'lock'))).toBe(false);
    lockStateDir(dir).release();
  });

  it('takes over the lock of a holder that died (kill -9 leaves the file behind)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    const pid = await holdInChild(dir);
    children.pop()?.kill();
    for (let i = 0; i < 100 && spawnSync('kill', ['-0', String(pid)]).status === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid });
    const lock = lockStateDir(dir);
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(lock.held()).toBe(true);
    lock.release();
  });

  it('takes over a lock whose pid now belongs to another process (its start time differs)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    writeFileSync(join(dir, 'lock'), JSON.stringify(holder({ pid: process.pid, procStart: '1' })));
    const lock = lockStateDir(dir);
    expect(lock.held()).toBe(true);
    lock.release();
  });

  it('never judges a lock from another host stale', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    writeFileSync(join(dir, 'lock'), JSON.stringify(holder({ pid: 999_999_999, host: 'elsewhere' })));
    expect(() => lockStateDir(dir)).toThrow(/on host elsewhere/);
  });

  it('takes over a torn (unreadable) lock only once it is older than a moment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    writeFileSync(join(dir, 'lock'), '{"pid":');
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'lock'), old, old);
    const lock = lockStateDir(dir);
    expect(lock.held()).toBe(true);
    lock.release();
  });

  it('--fresh clears the directory but keeps the lock', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    const lock = lockStateDir(dir);
    mkdirSync(join(dir, 'store'));
    writeFileSync(join(dir, 'store', 'state.json'), '{}');
    clearStateDir(dir, lock);
    expect(readdirSync(dir)).toEqual(['lock']);
    expect(lock.held()).toBe(true);
    lock.release();
  });
});
