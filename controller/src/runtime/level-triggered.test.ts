/**
 * The loop starts from what the backend observes, never from what it remembers: failed, hung and
 * half-done actions are re-planned, one job's failure is isolated, and a job ends when its
 * convergence rule holds on the logged loss or its program exits — in every backend alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { metricsTopic } from '../../../shared/src/topics';
import type { Decision, JobShape, PolicyInput } from '../scheduling/types';
import type { Controller } from './controller';
import type { Core } from './core';
import { coreOf } from './default-core';
import { buildController, fakeCore, FakeBackend, MemoryStore, testJobSpec } from './testing';

let wall = 1_000;
const now = () => wall;
const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

/** A core without pre-runs whose policy runs every job at `shape.value` on node-a. */
function directCore(shape: { value: JobShape }): Core {
  const base = fakeCore();
  return {
    ...base,
    sampleShapes: () => [],
    policy: {
      name: 'direct',
      description: 'test',
      decide: (input: PolicyInput): Decision => ({
        jobs: input.jobs.map((j) => ({
          jobId: j.id,
          action: 'run' as const,
          shape: shape.value,
          placement: [
            ...Array.from({ length: shape.value.ps }, (_, index) => ({
              role: 'ps' as const,
              index,
              server: 'node-a',
            })),
            ...Array.from({ length: shape.value.workers }, (_, index) => ({
              role: 'worker' as const,
              index,
              server: 'node-a',
            })),
          ],
          replaceWorkers: [],
        })),
      }),
    },
  };
}

async function start(o: Parameters<typeof buildController>[0] = {}) {
  const built = buildController({ now, ...o });
  await built.controller.start();
  started.push(built.controller);
  return built;
}

async function round(c: Controller, kind: 'full' | 'pre-run' = 'full'): Promise<void> {
  await c.roundNow(kind);
  await c.settled();
}

let seq = 0;
/** Worker 0 of `job` logs one batch record per step in `steps`, with `loss(step)`. */
function log(c: Controller, job: string, steps: readonly number[], loss: (step: number) => number): void {
  for (const step of steps) {
    wall += 1;
    const record: MetricsRecord = {
      v: 1,
      seq: seq++,
      ts: wall,
      framework: 'mxnet',
      kind: 'batch',
      epoch: Math.floor(step / 100),
      batch: step % 100,
      samplesPerSec: 64,
      stepTime: null,
      loss: loss(step),
      lossName: 'cross-entropy',
      metrics: {},
    };
    c.handleMessage(
      metricsTopic({ namespace: 'default', job, role: 'worker', index: 0 }),
      Buffer.from(JSON.stringify(record)),
    );
  }
}

describe('the level-triggered loop', () => {
  it('re-plans a job whose resize failed and left nothing running, within one round', async () => {
    const shape = { value: { ps: 1, workers: 1 } };
    const backend = new FakeBackend();
    const { controller: c } = await start({ backend, core: directCore(shape) });
    await c.submit(testJobSpec('r'));
    await round(c);
    await round(c);
    expect(backend.running.get('default/r')?.shape).toEqual({ ps: 1, workers: 1 });
    // The resize stops the old set (one step) and the new one fails to start: nothing of it runs.
    shape.value = { ps: 2, workers: 2 };
    backend.failStarts.add('default/r');
    await round(c);
    expect(c.get('default/r')).toMatchObject({ degraded: { stage: 'rollout' } });
    expect(backend.running.has('default/r')).toBe(false);
    backend.failStarts.delete('default/r');
    wall += 60_000; // past the retry backoff
    await round(c);
    await round(c);
    expect(backend.running.get('default/r')?.shape).toEqual({ ps: 2, workers: 2 });
    expect(c.get('default/r')).toMatchObject({ phase: 'running', degraded: null });
  });

  it('finishes a round while another job hangs in its rollout, and forgets the hung one', async () => {
    const backend = new FakeBackend();
    const { controller: c } = await start({
      backend,
      core: directCore({ value: { ps: 1, workers: 1 } }),
      options: { rolloutTimeoutSec: 2 }, // 200 ms at the test clock's scale of 10
    });
    backend.hang.add('default/slow');
    await c.submit(testJobSpec('slow'));
    await round(c, 'pre-run');
    await c.roundNow('full'); // the slow job's start is dispatched and hangs
    await c.submit(testJobSpec('fast'));
    await round(c, 'pre-run');
    await c.roundNow('full'); // not blocked by the hung rollout
    await new Promise((r) => setTimeout(r, 50));
    expect(backend.running.get('default/fast')?.shape).toEqual({ ps: 1, workers: 1 });
    await new Promise((r) => setTimeout(r, 300)); // the hung rollout times out
    expect(c.get('default/slow')).toMatchObject({
      degraded: { stage: 'rollout', reason: expect.stringContaining('timed out') },
    });
    backend.hang.delete('default/slow');
    backend.release();
    wall += 60_000;
    await round(c);
    await round(c);
    expect(backend.running.get('default/slow')?.shape).toEqual({ ps: 1, workers: 1 });
  });

  it('isolates a job whose refit throws: it is degraded, the others are scheduled', async () => {
    const base = directCore({ value: { ps: 1, workers: 1 } });
    const core: Core = {
      ...base,
      models: {
        of: (id) => {
          if (id === 'default/bad') throw new RangeError('Invalid array length');
          return null;
        },
      },
    };
    const backend = new FakeBackend();
    const { controller: c } = await start({ backend, core });
    await c.submit(testJobSpec('bad'));
    await c.submit(testJobSpec('good'));
    await round(c, 'pre-run');
    await round(c);
    expect(backend.running.has('default/good')).toBe(true);
    expect(backend.running.has('default/bad')).toBe(false);
    expect(c.get('default/bad')).toMatchObject({
      degraded: { stage: 'refit', reason: 'Invalid array length' },
    });
  });

  it('keeps scheduling every job when one logs an absurd epoch (real models)', async () => {
    const shape = { value: { ps: 1, workers: 1 } };
    const core = coreOf(directCore(shape).policy);
    const backend = new FakeBackend();
    const { controller: c } = await start({ backend, core, options: { preRun: { budget: 0 } } });
    await c.submit(testJobSpec('absurd'));
    await c.submit(testJobSpec('sane'));
    await round(c, 'pre-run');
    await round(c);
    const steps = Array.from({ length: 30 }, (_, i) => (i + 1) * 20);
    log(c, 'absurd', steps, (st) => 2 / (1 + st / 300));
    log(c, 'absurd', [1e12 * 100], () => 1e-300);
    log(c, 'sane', steps, (st) => 2 / (1 + st / 300));
    shape.value = { ps: 2, workers: 2 };
    await expect(round(c)).resolves.toBeUndefined();
    expect(backend.running.get('default/sane')?.shape).toEqual({ ps: 2, workers: 2 });
  });

  it('ends a job when its convergence rule holds on the logged loss, with a checkpoint', async () => {
    const backend = new FakeBackend();
    const { controller: c } = await start({ backend, core: directCore({ value: { ps: 1, workers: 1 } }) });
    await c.submit(testJobSpec('conv')); // δ = 0.02, K = 2, 100 steps per epoch
    await round(c, 'pre-run');
    await round(c);
    const steps = Array.from({ length: 40 }, (_, i) => (i + 1) * 25);
    log(c, 'conv', steps.slice(0, 16), (s) => 2 / (1 + s / 100)); // falling fast: 4 epochs
    await round(c);
    expect(c.get('default/conv')).toMatchObject({ phase: 'running' });
    log(c, 'conv', steps.slice(16), () => 0.5); // flat from epoch 4 on
    await round(c, 'pre-run');
    expect(c.get('default/conv')).toMatchObject({ phase: 'done', end: { reason: 'Converged' } });
    expect(backend.targets('default/conv').at(-1)).toMatchObject({
      tasks: [],
      checkpoint: true,
      end: { reason: 'Converged' },
    });
    expect(backend.running.has('default/conv')).toBe(false);
  });

  it('leaves a job of fixed work (convergence.stopsJob false) to end by itself, whatever its loss', async () => {
    const backend = new FakeBackend();
    const { controller: c } = await start({ backend, core: directCore({ value: { ps: 1, workers: 1 } }) });
    const spec = testJobSpec('fixed');
    await c.submit({ ...spec, convergence: { ...spec.convergence, stopsJob: false } });
    await round(c, 'pre-run');
    await round(c);
    const steps = Array.from({ length: 40 }, (_, i) => (i + 1) * 25);
    log(c, 'fixed', steps, (s) => (s <= 400 ? 2 / (1 + s / 100) : 0.5)); // the same flat tail as above
    await round(c, 'pre-run');
    await round(c);
    expect(c.get('default/fixed')).toMatchObject({ phase: 'running' });
    expect(backend.targets('default/fixed').filter((t) => t.end)).toEqual([]);
  });

  it('adopts a job the backend already records as finished instead of starting it again', async () => {
    const store = new MemoryStore();
    const first = await start({ store, core: directCore({ value: { ps: 1, workers: 1 } }) });
    await first.controller.submit(testJobSpec('over'));
    await round(first.controller, 'pre-run');
    await round(first.controller);
    await first.controller.stop(); // the store still says it runs
    const backend = new FakeBackend();
    backend.finished.set('default/over', { outcome: 'succeeded', reason: 'Converged', message: 'm' });
    const second = await start({ store, backend, core: directCore({ value: { ps: 1, workers: 1 } }) });
    await round(second.controller);
    expect(second.controller.get('default/over')).toMatchObject({
      phase: 'done',
      end: { reason: 'Converged' },
    });
    expect(backend.stepKinds('default/over').filter((k) => k === 'start')).toEqual([]);
  });

  it('does not roll out again a resize that ran but was not recorded before a crash', async () => {
    const store = new MemoryStore();
    const shape = { value: { ps: 1, workers: 1 } };
    const first = await start({ store, core: directCore(shape) });
    await first.controller.submit(testJobSpec('moved'));
    await round(first.controller, 'pre-run');
    await round(first.controller);
    await first.controller.stop();
    // The new controller finds the job running at the shape the (lost) resize chose.
    shape.value = { ps: 2, workers: 2 };
    const backend = new FakeBackend();
    backend.running.set('default/moved', {
      shape: { ps: 2, workers: 2 },
      placement: directCore(shape)
        .policy.decide({ now: 0, servers: [], jobs: [{ id: 'default/moved' } as never], restartCostSec: 0 })
        .jobs.flatMap((d) => (d.action === 'run' ? d.placement : [])),
    });
    const second = await start({ store, backend, core: directCore(shape) });
    await round(second.controller);
    expect(backend.stepKinds('default/moved').filter((k) => k === 'start' || k === 'stop')).toEqual([]);
    expect(second.controller.get('default/moved')).toMatchObject({ shape: { ps: 2, workers: 2 } });
  });

  it('observes a lost sidecar and hands its worker to the policy as one to replace', async () => {
    const shape = { value: { ps: 1, workers: 2 } };
    const base = directCore(shape);
    const inputs: PolicyInput[] = [];
    const core: Core = {
      ...base,
      policy: { ...base.policy, decide: (i) => (inputs.push(i), base.policy.decide(i)) },
    };
    const { controller: c } = await start({ core, options: { rolloutTimeoutSec: 60 } });
    await c.submit(testJobSpec('quiet'));
    await round(c, 'pre-run');
    await round(c);
    const lost = { v: 1, state: 'lost', ts: wall - 120_000 };
    c.handleMessage('optimus/v1/default/quiet/worker/1/status', Buffer.from(JSON.stringify(lost)));
    expect(c.get('default/quiet')).toMatchObject({ sidecars: { 'worker/1': 'lost' } });
    await round(c);
    expect(inputs.at(-1)?.jobs[0]?.lostWorkers).toEqual([1]);
    const online = { v: 1, state: 'online', ts: wall };
    c.handleMessage('optimus/v1/default/quiet/worker/1/status', Buffer.from(JSON.stringify(online)));
    await round(c);
    expect(inputs.at(-1)?.jobs[0]?.lostWorkers).toBeUndefined();
  });

  it('finishes a job whose end was recorded but whose tasks were left (a crash mid-cleanup)', async () => {
    const store = new MemoryStore();
    const backend = new FakeBackend();
    const first = await start({ store, backend, core: directCore({ value: { ps: 1, workers: 1 } }) });
    await first.controller.submit(testJobSpec('left'));
    await round(first.controller, 'pre-run');
    await round(first.controller);
    backend.exits.set('default/left', { outcome: 'succeeded', reason: 'WorkersSucceeded', message: '' });
    backend.failFor.add('default/left'); // the cleanup does not get through before the crash
    await round(first.controller, 'pre-run');
    await first.controller.stop();
    const again = new FakeBackend();
    again.running.set('default/left', backend.running.get('default/left')!);
    const second = await start({ store, backend: again, core: directCore({ value: { ps: 1, workers: 1 } }) });
    await round(second.controller);
    expect(again.targets('default/left')).toMatchObject([{ end: { reason: 'WorkersSucceeded' } }]);
    expect(again.running.has('default/left')).toBe(false);
  });
});
