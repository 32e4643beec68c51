/**
 * The log tee with real processes and a real `/bin/sh`: the program's output reaches the shared
 * log and the container's own output, its exit status survives, SIGTERM reaches the program (the
 * checkpoint request), and only a program that ended on its own leaves the done marker.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTeeWrapped, TEE_ARGV0, TEE_SCRIPT, wrapWithTee } from './log-tee';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function run(program: string[], signalAfterMs?: number, extraEnv: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'optimus-tee-'));
  dirs.push(dir);
  const log = join(dir, 'logs', 'train.log');
  const done = join(dir, 'logs', '.done');
  const child = spawn('/bin/sh', ['-c', TEE_SCRIPT, TEE_ARGV0, ...program], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      OPTIMUS_LOG_PATH: log,
      OPTIMUS_DONE_FILE: done,
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  if (signalAfterMs !== undefined) setTimeout(() => child.kill('SIGTERM'), signalAfterMs);
  return new Promise<{ code: number | null; out: string; log: string; done: boolean; dir: string }>(
    (resolve) =>
      child.on('exit', (code) =>
        resolve({
          code,
          out,
          log: readFileSync(log, 'utf8'),
          done: existsSync(done),
          dir: join(dir, 'logs'),
        }),
      ),
  );
}

describe('log tee', () => {
  it('copies stdout and stderr to the log and to its own output, keeps the exit status, marks the end', async () => {
    const r = await run(['sh', '-c', 'echo "Epoch[0] Batch [0-20]"; echo oops >&2; exit 3']);
    expect(r.code).toBe(3);
    expect(r.log).toBe('Epoch[0] Batch [0-20]\noops\n');
    expect(r.out).toBe(r.log);
    expect(r.done).toBe(true);
  });

  it('forwards SIGTERM to the program, which checkpoints and exits 0; no done marker then', async () => {
    const r = await run(
      ['sh', '-c', 'trap "echo Saved checkpoint; exit 0" TERM; echo started; while :; do sleep 0.05; done'],
      400,
    );
    expect(r.code).toBe(0);
    expect(r.log).toBe('started\nSaved checkpoint\n');
    expect(r.done).toBe(false);
  });

  it('leaves no FIFO behind in the log directory', async () => {
    const r = await run(['true']);
    expect(existsSync(r.dir) && readFileSync(join(r.dir, 'train.log'), 'utf8')).toBe('');
    expect(readdirSync(r.dir).sort()).toEqual(['.done', 'train.log']);
  });

  it('runs the program untouched, with its exit status, when the log directory cannot be written', async () => {
    const child = spawn('/bin/sh', ['-c', TEE_SCRIPT, TEE_ARGV0, 'sh', '-c', 'echo hi; exit 4'], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', OPTIMUS_LOG_PATH: '/proc/optimus/train.log' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(4);
    expect(out).toBe('hi\n');
    expect(err).toContain('running without copying the output');
  });

  it('rotates the copy past OPTIMUS_LOG_MAX_BYTES: log + log.1 stay bounded, nothing lost in the last two (ADR 0038)', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `Epoch[0] Batch [${i}] Speed: 100.0 samples/sec`);
    const r = await run(
      [
        'sh',
        '-c',
        'i=0; while [ $i -lt 200 ]; do echo "Epoch[0] Batch [$i] Speed: 100.0 samples/sec"; i=$((i+1)); done',
      ],
      undefined,
      {
        OPTIMUS_LOG_MAX_BYTES: '1000',
      },
    );
    expect(r.code).toBe(0);
    expect(r.out).toBe(lines.map((l) => `${l}\n`).join('')); // the container's own output is whole
    const previous = readFileSync(join(r.dir, 'train.log.1'), 'utf8');
    expect(Buffer.byteLength(r.log)).toBeLessThan(1000);
    expect(Buffer.byteLength(previous)).toBeLessThan(1000 + 60);
    // The two files are the contiguous end of the output.
    expect(r.out.endsWith(previous + r.log)).toBe(true);
    expect(readdirSync(r.dir).sort()).toEqual(['.done', 'train.log', 'train.log.1']);
  });

  it('passes each line on to the log as it comes, not when a buffer fills', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-tee-'));
    dirs.push(dir);
    const log = join(dir, 'train.log');
    const go = join(dir, 'go');
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        TEE_SCRIPT,
        TEE_ARGV0,
        'sh',
        '-c',
        `echo first; while [ ! -e ${go} ]; do sleep 0.05; done; echo second`,
      ],
      {
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', OPTIMUS_LOG_PATH: log },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // The program waits for "go" after its first line: that line must already be in the log.
    for (let i = 0; i < 200 && !(existsSync(log) && readFileSync(log, 'utf8') === 'first\n'); i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(readFileSync(log, 'utf8')).toBe('first\n');
    writeFileSync(go, '');
    await exited;
    expect(readFileSync(log, 'utf8')).toBe('first\nsecond\n');
  });

  it('wraps a container with a command once, and cannot wrap one without', () => {
    const wrapped = wrapWithTee({ command: ['python3', 'train.py'], args: ['--lr', '1'] });
    expect(wrapped?.args).toEqual(['python3', 'train.py', '--lr', '1']);
    expect(isTeeWrapped(wrapped!)).toBe(true);
    expect(wrapWithTee(wrapped!)).toBe(wrapped);
    expect(wrapWithTee({ args: ['--lr', '1'] })).toBeNull();
  });
});
