/**
 * The shipped example wrappers, run with a real Python: the MXNet resume wrapper against a stub of
 * the MXNet API it relies on (test/examples/mxnet-stub), through a real SIGTERM and a restart; the
 * TensorFlow launcher's TF_CONFIG. Skipped, visibly, where no python3 is installed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLES = join(ROOT, 'charts', 'optimus', 'examples');
const STUB = join(import.meta.dirname, 'mxnet-stub');
const python = (() => {
  try {
    execFileSync('python3', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Run {
  readonly out: () => string;
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

function runWrapper(ckpt: string, role = 'worker'): Run {
  const child = spawn(
    'python3',
    [join(EXAMPLES, 'mxnet', 'optimus_mxnet.py'), join(STUB, 'train.py'), '--num-epochs', '3'],
    {
      env: {
        ...process.env,
        PYTHONPATH: STUB,
        PYTHONUNBUFFERED: '1',
        DMLC_ROLE: role,
        OPTIMUS_KVSTORE: 'dist_sync',
        OPTIMUS_BATCH_SIZE: '85',
        OPTIMUS_CHECKPOINT_DIR: ckpt,
        OPTIMUS_GRACE_SECONDS: '20',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return {
    out: () => out,
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    kill: (s) => child.kill(s),
  };
}

const waitFor = async (run: Run, pattern: RegExp, timeoutMs = 10_000) =>
  expect.poll(() => pattern.test(run.out()), { timeout: timeoutMs, interval: 20 }).toBe(true);

describe.skipIf(!python)('MXNet resume wrapper (examples/mxnet/optimus_mxnet.py)', () => {
  it('saves a checkpoint on SIGTERM at a batch end, exits 0, and the restart resumes from it', async () => {
    const ckpt = mkdtempSync(join(tmpdir(), 'optimus-ckpt-'));
    dirs.push(ckpt);
    const first = runWrapper(ckpt);
    await waitFor(first, /Epoch\[0\] Batch \[5-10\]/);
    expect(first.out()).toContain('start: kv=dist_sync batch=85 begin_epoch=0 trained=0');
    first.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.out()).toMatch(/Saved checkpoint to ".*model-0000\.params"/);
    expect(readdirSync(ckpt)).toEqual(['model-0000.params']);

    const second = runWrapper(ckpt);
    await waitFor(second, /start: kv=dist_sync batch=85 begin_epoch=0 trained=(\d+)/);
    const trained = Number(/trained=(\d+)/.exec(second.out())?.[1]);
    expect(trained).toBeGreaterThanOrEqual(10); // the weights of the first run, not a fresh start
    second.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 30_000);

  it('resumes from the newest epoch checkpoint when several exist', () => {
    const ckpt = mkdtempSync(join(tmpdir(), 'optimus-ckpt-'));
    dirs.push(ckpt);
    for (const e of ['0001', '0007', '0003']) execFileSync('touch', [join(ckpt, `model-${e}.params`)]);
    const code = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(join(EXAMPLES, 'mxnet'))})`,
      'import optimus_mxnet as m',
      `print(json.dumps(m.training_args(["--network", "resnet", "--kv-store", "local", "--batch-size=9"], {"OPTIMUS_KVSTORE": "dist_async", "OPTIMUS_BATCH_SIZE": "64", "OPTIMUS_CHECKPOINT_DIR": ${JSON.stringify(ckpt)}})))`,
    ].join('\n');
    const [args, prefix] = JSON.parse(execFileSync('python3', ['-c', code]).toString()) as [string[], string];
    expect(prefix).toBe(join(ckpt, 'model'));
    expect(args).toEqual([
      '--network',
      'resnet',
      '--kv-store',
      'dist_async',
      '--batch-size',
      '64',
      '--model-prefix',
      join(ckpt, 'model'),
      '--load-epoch',
      '7',
    ]);
  });

  it('keeps a server up after SIGTERM until worker 0 has written its checkpoint', async () => {
    const ckpt = mkdtempSync(join(tmpdir(), 'optimus-ckpt-'));
    dirs.push(ckpt);
    const server = runWrapper(ckpt, 'server');
    await waitFor(server, /Epoch\[0\] Batch \[0-5\]/);
    server.kill('SIGTERM');
    const t0 = Date.now();
    let exited = false;
    void server.exited.then(() => (exited = true));
    await new Promise((r) => setTimeout(r, 600));
    expect(exited).toBe(false); // still serving: no checkpoint yet
    execFileSync('touch', [join(ckpt, 'model-0000.params')]);
    expect(await server.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 30_000);
});

describe.skipIf(!python)('TensorFlow launcher (examples/tf2/optimus_tf.py)', () => {
  it.each([
    { role: 'scheduler', index: '0', task: { type: 'chief', index: 0 } },
    { role: 'ps', index: '1', task: { type: 'ps', index: 1 } },
    { role: 'worker', index: '2', task: { type: 'worker', index: 2 } },
  ])('builds TF_CONFIG for $role $index from the controller environment', ({ role, index, task }) => {
    const out = execFileSync('python3', [join(EXAMPLES, 'tf2', 'optimus_tf.py'), '--print-tf-config'], {
      env: {
        ...process.env,
        OPTIMUS_ROLE: role,
        OPTIMUS_INDEX: index,
        OPTIMUS_NUM_PS: '2',
        OPTIMUS_NUM_WORKERS: '3',
        OPTIMUS_SERVICE: 'mnist.ml.svc',
        OPTIMUS_PORT: '2222',
      },
    });
    expect(JSON.parse(out.toString())).toEqual({
      cluster: {
        chief: ['scheduler-0.mnist.ml.svc:2222'],
        ps: ['ps-0.mnist.ml.svc:2222', 'ps-1.mnist.ml.svc:2222'],
        worker: ['worker-0.mnist.ml.svc:2222', 'worker-1.mnist.ml.svc:2222', 'worker-2.mnist.ml.svc:2222'],
      },
      task,
    });
  });
});
