import { afterEach, describe, expect, it } from 'vitest';
import { jobPlanSchema } from '../../../shared/src/schemas';
import { planTopic } from '../../../shared/src/topics';
import type { Controller } from './controller';
import { shapeOf } from './rollout/target';
import type { FakeBackend } from './testing';
import { buildController, MemoryStore, speedRecord, testJobSpec } from './testing';

/** The shape of the last target the runtime stepped the job toward (null: it holds nothing). */
const lastShape = (b: FakeBackend, id: string) => {
  const t = b.targets(id).at(-1);
  return t ? shapeOf(t) : undefined;
};

const metric = async (c: Controller, name: string): Promise<string> =>
  (await c.metrics.registry.metrics())
    .split('\n')
    .filter((l) => l.startsWith(name))
    .join('\n');

const spec = testJobSpec;

let wall = 1_000;
const now = () => wall;
const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

/** Feeds `n` records per running worker of `job`, at increasing wall times. */
function feed(c: Controller, backend: FakeBackend, job: string, n: number): void {
  const shape = backend.running.get(`default/${job}`)?.shape;
  for (let i = 0; i < n; i += 1) {
    wall += 10;
    for (let w = 0; w < (shape?.workers ?? 0); w += 1) {
      const r = speedRecord(job, w, wall, wall);
      c.handleMessage(r.topic, r.payload);
    }
  }
}

async function start(o: Parameters<typeof buildController>[0] = {}) {
  const built = buildController({ now, ...o });
  await built.controller.start();
  started.push(built.controller);
  return built;
}

/** A round, and the rollouts it dispatched confirmed (or forgotten). */
async function round(c: Controller, kind: 'full' | 'pre-run'): Promise<void> {
  await c.roundNow(kind);
  await c.settled();
}

describe('Controller', () => {
  it('pre-runs a new job at the sample shapes, then lets the policy decide', async () => {
    const { controller: c, backend, core } = await start();
    await c.submit(spec('a'));
    await round(c, 'pre-run');
    expect(lastShape(backend, 'default/a')).toEqual({ ps: 1, workers: 1 });
    feed(c, backend, 'a', 3);
    await round(c, 'pre-run');
    expect(lastShape(backend, 'default/a')).toEqual({ ps: 1, workers: 2 });
    expect(backend.stepKinds('default/a')).toEqual(['start', 'stop', 'start']);
    feed(c, backend, 'a', 3);
    await round(c, 'pre-run');
    feed(c, backend, 'a', 3);
    await round(c, 'pre-run'); // the last sample is done: the job leaves its pre-run
    expect(c.records()[0]?.phase).toBe('running');
    await round(c, 'full');
    expect(core.policy.name).toBe('fixed');
    expect(lastShape(backend, 'default/a')).toEqual({ ps: 2, workers: 2 });
    const rec = c.records()[0]!;
    expect(rec.restarts).toBe(3);
    expect(rec.spans.at(-1)).toMatchObject({ shape: { ps: 2, workers: 2 }, fitted: true });
  });

  it('starts a job of a model others measured without a pre-run, with their speeds (ADR 0021)', async () => {
    const { controller: c, backend } = await start();
    await c.submit({ ...spec('a'), model: 'resnet-50' });
    for (let i = 0; i < 4; i += 1) {
      await round(c, 'pre-run');
      feed(c, backend, 'a', 3);
    }
    expect(c.records().find((r) => r.spec.name === 'a')?.phase).toBe('running');
    await c.submit({ ...spec('b'), model: 'resnet-50' });
    await c.submit({ ...spec('c'), model: 'resnet-50', batchSize: 128 }); // another batch: no peer
    await c.submit(spec('d')); // no model declared
    await round(c, 'pre-run');
    const phase = (name: string) => c.records().find((r) => r.spec.name === name)?.phase;
    expect(phase('b')).toBe('running');
    expect(phase('c')).toBe('pre-run');
    expect(phase('d')).toBe('pre-run');
    await round(c, 'full');
    const b = c.modelsOf('default/b');
    expect(b?.speedFitted).toBe(true);
    expect(b?.speed.predict(1, 2).stepsPerSec).toBeGreaterThan(0);
  });

  it('publishes a retained plan with the shape and a predicted completion', async () => {
    const { controller: c, backend, publisher } = await start();
    await c.submit(spec('p'));
    for (let i = 0; i < 4; i += 1) {
      await round(c, 'pre-run');
      feed(c, backend, 'p', 3);
    }
    await round(c, 'full');
    const plan = jobPlanSchema.parse(
      JSON.parse(publisher.retained.get(planTopic({ namespace: 'default', job: 'p' }))!),
    );
    expect(plan).toMatchObject({ state: 'running', ps: 2, workers: 2 });
    expect(plan.placement).toHaveLength(4);
    expect(plan.predictedRemainingSec?.value).toBeGreaterThan(0);
    expect(plan.predictedCompletionTs?.value).toBeGreaterThan(wall);
  });

  it('keeps the record of a start the executor failed unchanged, and says why', async () => {
    const { controller: c, backend } = await start();
    backend.failFor.add('default/f');
    await c.submit(spec('f'));
    await round(c, 'pre-run');
    expect(c.records()[0]).toMatchObject({ phase: 'pending', restarts: 0, spans: [] });
    expect(c.records()[0]?.degraded).toMatchObject({
      stage: 'rollout',
      reason: expect.stringContaining('nope'),
    });
    expect(await metric(c, 'optimus_job_errors_total')).toContain('stage="rollout"} 1');
  });

  it('marks a job whose program exited done, publishes it, and finishes it through the executor', async () => {
    const { controller: c, backend, publisher } = await start();
    await c.submit(spec('d'));
    await round(c, 'pre-run');
    backend.exits.set('default/d', { outcome: 'succeeded', reason: 'WorkersSucceeded', message: 'all done' });
    await round(c, 'pre-run');
    expect(c.records()[0]).toMatchObject({ phase: 'done', end: { reason: 'WorkersSucceeded' } });
    expect(c.allDone()).toBe(true);
    // Recorded as over first, then stopped at once (its program ended: nothing to checkpoint).
    expect(backend.targets('default/d').at(-1)).toMatchObject({
      tasks: [],
      checkpoint: false,
      end: { outcome: 'succeeded' },
    });
    expect(backend.stepKinds('default/d').slice(-2)).toEqual(['record-end', 'stop']);
    expect(backend.running.has('default/d')).toBe(false);
    expect(publisher.retained.get(planTopic({ namespace: 'default', job: 'd' }))).toContain('"state":"done"');
    const steps = backend.steps.length;
    await round(c, 'full'); // recorded as finished and nothing runs: nothing more to do
    expect(backend.steps).toHaveLength(steps);
  });

  it('resumes after a restart with every job and observation, and de-duplicates resent records', async () => {
    const store = new MemoryStore();
    const first = await start({ store });
    await first.controller.submit(spec('r'));
    await round(first.controller, 'pre-run');
    const r = speedRecord('r', 0, wall + 1, 5);
    first.controller.handleMessage(r.topic, r.payload);
    await first.controller.stop();

    const second = await start({ store });
    expect(second.controller.records().map((x) => x.spec.name)).toEqual(['r']);
    expect(second.controller.ingest.counters().received).toBe(1);
    second.controller.handleMessage(r.topic, r.payload); // the sidecar re-sends after the restart
    expect(second.controller.ingest.counters()).toMatchObject({ received: 1, duplicates: 1 });
    // Nothing runs in the new backend: the job's first sample is started again.
    await round(second.controller, 'pre-run');
    expect(lastShape(second.backend, 'default/r')).toEqual({ ps: 1, workers: 1 });
    expect(second.backend.stepKinds('default/r')).toEqual(['start']);
  });

  it('has saved a submitted job by the time the submission is answered', async () => {
    const store = new MemoryStore();
    const first = await start({ store });
    first.publisher.publish = () => new Promise<void>(() => {}); // the plan publish never completes
    await first.controller.submit(spec('durable'));
    // What a kill -9 right after the answer leaves behind:
    const after = Object.assign(new MemoryStore(), { doc: structuredClone(store.doc) });
    const second = await start({ store: after });
    expect(second.controller.records().map((r) => r.spec.name)).toEqual(['durable']);
  });

  it('answers what-if and rejects unknown or duplicate jobs', async () => {
    const { controller: c } = await start();
    await c.submit(spec('w'));
    await expect(c.submit(spec('w'))).rejects.toMatchObject({ status: 409 });
    expect(() => c.get('default/nope')).toThrow(/not found/);
    expect(c.whatIf('default/w', 2, 3)).toMatchObject({ shape: { ps: 2, workers: 3 }, fitted: false });
    await expect(c.remove('default/nope')).rejects.toMatchObject({ status: 404 });
  });

  it('admits one of two concurrent submissions of the same job; the other gets 409', async () => {
    const { controller: c } = await start();
    const [a, b] = await Promise.allSettled([c.submit(spec('twice')), c.submit(spec('twice'))]);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({ status: 'rejected', reason: { status: 409 } });
    expect(c.list()).toHaveLength(1);
  });

  it('keeps running rounds and stops cleanly after a round that failed', async () => {
    const { controller: c, backend } = await start();
    const observe = backend.observe.bind(backend);
    backend.observe = () => Promise.reject(new Error('API down'));
    await expect(c.roundNow('full')).rejects.toThrow('API down');
    backend.observe = observe;
    await c.submit(spec('later'));
    await round(c, 'pre-run');
    expect(backend.stepKinds('default/later')).toEqual(['start']);
    await expect(c.stop()).resolves.toBeUndefined();
  });

  it('keeps scheduling, removing and stopping while the broker never acknowledges', async () => {
    const { controller: c, backend, publisher } = await start();
    publisher.publish = () => new Promise<void>(() => {});
    await c.submit(spec('offline'));
    await round(c, 'pre-run');
    expect(backend.stepKinds('default/offline')).toEqual(['start']);
    await c.remove('default/offline');
    expect(c.list()).toEqual([]);
    await expect(c.stop()).resolves.toBeUndefined();
  });
});
