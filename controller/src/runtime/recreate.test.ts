/**
 * A job removed and submitted again under the same name is a new job: it must never see the
 * observations of its predecessor, and its own records (whose seqs start at 0 again) must not be
 * taken for duplicates — neither in the same life of the controller nor after a restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { metricsTopic, type TaskId } from '../../../shared/src/topics';
import type { Controller } from './controller';
import { buildController, FakeBackend, MemoryStore, testJobSpec } from './testing';

const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

async function start(store: MemoryStore, backend = new FakeBackend()): Promise<Controller> {
  const { controller } = buildController({ store, backend, now: () => 1_000 });
  await controller.start();
  started.push(controller);
  return controller;
}

/** Sends worker 0's records with seqs `from..to-1` at global steps `stepBase + seq + 1`. */
function send(c: Controller, o: { from: number; to: number; stepBase: number }): void {
  const task: TaskId = { namespace: 'default', job: 'x', role: 'worker', index: 0 };
  for (let seq = o.from; seq < o.to; seq += 1) {
    const step = o.stepBase + seq;
    const record: MetricsRecord = {
      v: 1,
      seq,
      ts: 1_000 + seq,
      framework: 'mxnet',
      kind: 'batch',
      epoch: Math.floor(step / 100),
      batch: step % 100,
      samplesPerSec: 64,
      stepTime: null,
      loss: 1,
      lossName: 'cross-entropy',
      metrics: {},
    };
    c.handleMessage(metricsTopic(task), Buffer.from(JSON.stringify(record)));
  }
}

/** What a `kill -9` leaves: the store as it is now (the dead controller keeps its own copy). */
function crash(store: MemoryStore): MemoryStore {
  const copy = new MemoryStore();
  copy.doc = structuredClone(store.doc);
  copy.records = structuredClone(store.records);
  return copy;
}

const observed = (c: Controller) => {
  const view = c.get('default/x') as { observations: { records: number; stepsDone: number } };
  const { records, stepsDone } = view.observations;
  return { records, stepsDone };
};

describe('a job re-created under the name of a removed one', () => {
  it('sees only its own records, in this life and after a restart', async () => {
    const store = new MemoryStore();
    const first = await start(store);
    await first.submit(testJobSpec('x'));
    send(first, { from: 0, to: 6, stepBase: 5_000 }); // the old job, far along
    await first.remove('default/x');
    await first.submit(testJobSpec('x'));
    send(first, { from: 0, to: 2, stepBase: 0 }); // the new job's sidecar starts again at seq 0
    expect(observed(first)).toEqual({ records: 2, stepsDone: 2 });
    await first.stop();

    const second = await start(crash(store));
    expect(observed(second)).toEqual({ records: 2, stepsDone: 2 });
    send(second, { from: 2, to: 3, stepBase: 0 });
    expect(observed(second)).toEqual({ records: 3, stepsDone: 3 });
    expect(second.ingest.counters()).toMatchObject({ received: 3, duplicates: 0 });
  });

  it('tells the backend a submission is fresh, so it drops what it kept under the name', async () => {
    const store = new MemoryStore();
    const backend = new FakeBackend();
    const first = await start(store, backend);
    await first.submit(testJobSpec('x'));
    await first.remove('default/x');
    await first.submit(testJobSpec('x'));
    await first.stop();
    const resumed = new FakeBackend();
    await start(crash(store), resumed);
    expect(backend.admits).toEqual([
      { id: 'default/x', fresh: true },
      { id: 'default/x', fresh: true },
    ]);
    expect(resumed.admits).toEqual([{ id: 'default/x', fresh: false }]);
  });

  it('does not resurrect the old records when the controller died right after the removal', async () => {
    // MemoryStore never purges: its records are what a crash between removal and purge leaves.
    const store = new MemoryStore();
    const first = await start(store);
    await first.submit(testJobSpec('x'));
    send(first, { from: 0, to: 4, stepBase: 5_000 });
    await first.remove('default/x');

    const after = crash(store);
    const second = await start(after);
    expect(second.list()).toEqual([]);
    await second.submit(testJobSpec('x'));
    send(second, { from: 0, to: 2, stepBase: 0 });
    expect(observed(second)).toEqual({ records: 2, stepsDone: 2 });
    await second.stop();

    const third = await start(crash(after));
    expect(observed(third)).toEqual({ records: 2, stepsDone: 2 });
  });

  it('keeps a removal that was never saved: the old job comes back whole, with its records', async () => {
    const store = new MemoryStore();
    const first = await start(store);
    await first.submit(testJobSpec('x'));
    send(first, { from: 0, to: 3, stepBase: 10 });
    await first.stop();
    // The controller dies during the removal, before the document without the job is written.
    const before = crash(store);
    const second = await start(store);
    await second.remove('default/x');
    before.records = structuredClone(store.records);

    const third = await start(before);
    expect(observed(third)).toEqual({ records: 3, stepsDone: 13 });
  });
});
