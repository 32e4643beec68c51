import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTRACT_SERVERS,
  describeExecutorContract,
  type ExecutorHarness,
} from '../../../test/contracts/executor-contract';
import { jobSpecSchema } from '../runtime/job-spec';
import { targetOf } from '../../../test/contracts/executor-contract';
import { LocalBackend } from './backend';
import { PidRegistry } from './processes';
import { buildTrainer } from './trainer-bundle';

let root = '';
let trainer = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'optimus-local-'));
  trainer = await buildTrainer(join(root, 'bin'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
async function makeHarness(): Promise<ExecutorHarness> {
  n += 1;
  const backend = new LocalBackend({
    servers: CONTRACT_SERVERS,
    root: join(root, `h${n}`),
    trainerScript: trainer,
    sidecar: null,
    timeScale: 1,
    restartCostSec: 0,
    pids: new PidRegistry(join(root, `pids-${n}.json`)),
    marker: `contract-${n}`,
  });
  return {
    executor: backend.executor,
    observe: () => backend.observe(),
    submit: (job) => backend.admit(job),
    settle: () => new Promise((r) => setTimeout(r, 50)),
    close: () => backend.close(),
  };
}

describeExecutorContract('local', makeHarness);

describe('LocalBackend after a task exits', () => {
  it('observes the end of the program even when its bookkeeping fails, reporting the error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-local-exit-'));
    const script = join(dir, 'exit.mjs');
    writeFileSync(
      script,
      "process.stdout.write('optimus-ready\\n'); setTimeout(() => process.exit(0), 100);\n",
    );
    const pids = new PidRegistry(join(dir, 'pids.json'));
    pids.delete = () => {
      throw new Error('state directory gone');
    };
    const errors: unknown[] = [];
    let changed = 0;
    const backend = new LocalBackend({
      servers: CONTRACT_SERVERS,
      root: join(dir, 'jobs'),
      trainerScript: script,
      sidecar: null,
      timeScale: 1,
      restartCostSec: 0,
      pids,
      marker: 'exit-test',
      onError: (err) => errors.push(err),
    });
    backend.attach({ changed: () => (changed += 1) });
    const spec = jobSpecSchema.parse({
      name: 'quick',
      batchSize: 64,
      stepsPerEpoch: 100,
      psDemand: { cpu: 1 },
      workerDemand: { cpu: 1 },
    });
    await backend.admit(spec);
    const server = CONTRACT_SERVERS[0].name;
    const tasks = [
      { role: 'ps' as const, index: 0, server, generation: 1 },
      { role: 'worker' as const, index: 0, server, generation: 1 },
    ];
    await backend.executor.step({
      jobId: 'default/quick',
      spec,
      target: targetOf(1, tasks),
      observed: undefined,
      step: { kind: 'start', tasks },
    });
    const exited = async () => (await backend.observe()).jobs.get('default/quick')?.exited ?? null;
    for (let i = 0; i < 100 && (await exited()) === null; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(await exited()).toMatchObject({ outcome: 'succeeded', reason: 'WorkersSucceeded' });
    expect(changed).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0])).toContain('state directory gone');
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('LocalBackend admitting a job under an earlier job’s name', () => {
  const spec = jobSpecSchema.parse({
    namespace: 'default',
    name: 'again',
    mode: 'sync',
    batchSize: 64,
    stepsPerEpoch: 100,
    psDemand: { cpu: 1, mem: 1, gpu: 0 },
    workerDemand: { cpu: 1, mem: 1, gpu: 0 },
  });
  const backendAt = (dir: string) =>
    new LocalBackend({
      servers: CONTRACT_SERVERS,
      root: join(dir, 'jobs'),
      trainerScript: trainer,
      sidecar: null,
      timeScale: 1,
      restartCostSec: 0,
      pids: new PidRegistry(join(dir, 'pids.json')),
      marker: 'again-test',
    });
  const checkpoint = (dir: string) => join(dir, 'jobs', 'default__again', 'checkpoint.json');

  it.each([
    { name: 'a fresh submission starts clean', fresh: true, kept: false },
    { name: 'a job resumed from the store keeps its checkpoint', fresh: false, kept: true },
  ])('$name', async ({ fresh, kept }) => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-local-again-'));
    const first = backendAt(dir);
    await first.admit(spec, { fresh: true });
    writeFileSync(checkpoint(dir), '{"step":5000}');
    await first.close();
    const second = backendAt(dir);
    await second.admit(spec, { fresh });
    expect(existsSync(checkpoint(dir))).toBe(kept);
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
