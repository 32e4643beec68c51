/**
 * What the reference PyTorch trainers read from the controller's environment, checked without torch
 * (`python3 optimus_torch.py config allreduce|ps`): the rank mapping, the rendezvous, the batch split
 * (the same rule as controller/src/runtime/batch.ts, compared on a grid) and the refusals.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { effectiveGlobalBatch, perWorkerBatch } from '../../controller/src/runtime/batch';
import { EXAMPLES, trainerEnv, type Shape } from './harness';

const python = spawnSync('python3', ['--version']).status === 0;

function config(kind: 'allreduce' | 'ps', env: Record<string, string>, args: string[] = []) {
  const r = spawnSync('python3', [join(EXAMPLES, 'optimus_torch.py'), 'config', kind, ...args], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
  });
  return {
    code: r.status,
    config: r.status === 0 ? (JSON.parse(r.stdout) as Record<string, unknown>) : null,
    stderr: r.stderr,
  };
}

const envOf = (shape: Shape, role: 'ps' | 'worker', index: number, batchSize: number) =>
  trainerEnv({ shape, role, index, batchSize, masterPort: 29500, checkpointDir: '/ckpt', graceSeconds: 60 });

describe.skipIf(!python)('the trainers read the controller environment (no torch needed)', () => {
  it.each([
    { role: 'ps' as const, index: 0, rank: 0 },
    { role: 'ps' as const, index: 1, rank: 1 },
    { role: 'worker' as const, index: 0, rank: 2 },
    { role: 'worker' as const, index: 2, rank: 4 },
  ])('PS trainer: $role $index of 2 PS × 3 workers is RPC rank $rank of 5', ({ role, index, rank }) => {
    const shape: Shape = { kind: 'ps', ps: 2, workers: 3, mode: 'sync' };
    const { config: c } = config('ps', envOf(shape, role, index, 64));
    expect(c).toMatchObject({ role, index, rank, world_size: 5, num_ps: 2, num_workers: 3, mode: 'sync' });
    expect(c).toMatchObject({ batch_size: 21, global_batch: 63, checkpoint_dir: '/ckpt', grace_seconds: 60 });
  });

  it('all-reduce trainer: torchrun variables, the Optimus ones standing in when they are missing', () => {
    const shape: Shape = { kind: 'allreduce', ps: 0, workers: 4, mode: 'sync' };
    expect(config('allreduce', envOf(shape, 'worker', 3, 256)).config).toMatchObject({
      rank: 3,
      world_size: 4,
      local_rank: 3,
      master_addr: '127.0.0.1',
      master_port: 29500,
      batch_size: 64,
      global_batch: 256,
    });
    // Only what the controller sets for every pod today: the rendezvous is worker 0's pod.
    const plain = {
      OPTIMUS_ROLE: 'worker',
      OPTIMUS_INDEX: '1',
      OPTIMUS_NUM_WORKERS: '2',
      OPTIMUS_SERVICE: 'mnist.ml.svc',
      OPTIMUS_PORT: '2222',
    };
    expect(config('allreduce', plain).config).toMatchObject({
      rank: 1,
      world_size: 2,
      master_addr: 'worker-0.mnist.ml.svc',
      master_port: 2222,
    });
    expect(config('ps', { ...plain, OPTIMUS_NUM_PS: '1' }).config).toMatchObject({
      rank: 2,
      master_addr: 'ps-0.mnist.ml.svc',
    });
  });

  it('splits a job batch over the workers exactly as the controller does, with the remainder dropped', () => {
    const grid = (['sync', 'async'] as const).flatMap((mode) =>
      [1, 7, 64, 100, 256].flatMap((batchSize) =>
        [1, 2, 3, 5, 8].map((workers) => ({ mode, batchSize, workers })),
      ),
    );
    // One interpreter for the whole grid: its read_config, with only the job's batch and shape given.
    const code = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(EXAMPLES)})`,
      'import optimus_torch as ot',
      'grid = json.loads(sys.argv[1])',
      'env = lambda g: {"OPTIMUS_NUM_PS": "1", "OPTIMUS_NUM_WORKERS": str(g["workers"]), "OPTIMUS_MODE": g["mode"]}',
      'out = [ot.read_config("ps", ["--batch-size", str(g["batchSize"])], env(g)) for g in grid]',
      'print(json.dumps([[c.batch_size, c.global_batch] for c in out]))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', code, JSON.stringify(grid)], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(
      grid.map((g) => [
        perWorkerBatch(g.mode, g.batchSize, g.workers),
        effectiveGlobalBatch(g.mode, g.batchSize, g.workers),
      ]),
    );
  });

  it.each([
    {
      why: 'a PS in an all-reduce job',
      kind: 'allreduce' as const,
      env: { OPTIMUS_ROLE: 'ps' },
      says: 'workers only',
    },
    {
      why: 'RANK against OPTIMUS_INDEX',
      kind: 'allreduce' as const,
      env: { RANK: '1', WORLD_SIZE: '2', OPTIMUS_INDEX: '0' },
      says: 'RANK=1 but OPTIMUS_INDEX=0',
    },
    {
      why: 'an index beyond the shape',
      kind: 'ps' as const,
      env: { OPTIMUS_ROLE: 'worker', OPTIMUS_INDEX: '3', OPTIMUS_NUM_WORKERS: '3' },
      says: 'outside 0..2',
    },
    {
      why: 'a global batch that is not this shape’s',
      kind: 'ps' as const,
      env: { OPTIMUS_NUM_WORKERS: '3', OPTIMUS_BATCH_SIZE: '21', OPTIMUS_GLOBAL_BATCH_SIZE: '64' },
      says: 'OPTIMUS_GLOBAL_BATCH_SIZE=64 but this shape',
    },
    {
      why: 'a non-number',
      kind: 'ps' as const,
      env: { OPTIMUS_NUM_PS: 'two' },
      says: 'OPTIMUS_NUM_PS must be an integer',
    },
  ])('refuses $why with exit 2 and a message', ({ kind, env, says }) => {
    const r = config(kind, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(says);
  });

  it('turns SIGTERM into a stop request in its own thread, then exits 1 at the deadline; --log-file gets the records and the done marker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-stopper-'));
    try {
      const log = join(dir, 'train.log');
      const done = join(dir, 'train.log.done');
      const code = [
        'import sys, time',
        `sys.path.insert(0, ${JSON.stringify(EXAMPLES)})`,
        'import optimus_torch as ot',
        'ot.block_stop_signals()',
        'cfg = ot.read_config("ps", ["--log-file", sys.argv[1]], {"OPTIMUS_GRACE_SECONDS": "4", "OPTIMUS_DONE_FILE": sys.argv[2]})',
        'log = ot.Log(cfg)',
        'stopper = ot.Stopper(cfg, log).start()',
        'log.record("batch", epoch=0, batch=0, global_step=1, loss=float("nan"))',
        'stopper.wait(20)',
        'log.record("checkpoint", epoch=0, global_step=1, reason=stopper.reason)',
        'log.close()',
        'time.sleep(20)  # stuck, as behind a dead peer: the deadline ends it',
      ].join('\n');
      const child = spawn('python3', ['-c', code, log, done], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      await expect.poll(() => out.includes('"kind":"batch"'), { timeout: 20_000 }).toBe(true);
      const signalled = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(1);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(1900); // max(grace / 2, grace - 5) = 2 s
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toEqual([
        { kind: 'batch', epoch: 0, batch: 0, global_step: 1, loss: null }, // NaN is no JSON: null
        { kind: 'checkpoint', epoch: 0, global_step: 1, reason: 'SIGTERM' },
      ]);
      expect(readFileSync(log, 'utf8')).toBe(out);
      expect(existsSync(done)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops once its parent is another process than OPTIMUS_PARENT_PID (local mode: the controller died)', () => {
    const code = [
      'import sys',
      `sys.path.insert(0, ${JSON.stringify(EXAMPLES)})`,
      'import optimus_torch as ot',
      'ot.block_stop_signals()',
      'cfg = ot.read_config("ps", [], {"OPTIMUS_PARENT_PID": "1"})',
      'stopper = ot.Stopper(cfg, ot.Log(cfg)).start()',
      'print(stopper.wait(10) and stopper.reason)',
    ].join('\n');
    const r = spawnSync('python3', ['-c', code], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('parent process gone');
  });
});
