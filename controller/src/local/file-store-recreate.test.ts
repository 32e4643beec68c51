/**
 * The runtime over the real FileStore: a job removed and submitted again under its name must get
 * only its own records back after a restart, also when the controller died before the purge.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { metricsTopic } from '../../../shared/src/topics';
import { scaledClock } from '../runtime/clock';
import { Controller } from '../runtime/controller';
import { fakeCore, FakeBackend, MemoryPublisher, testJobSpec } from '../runtime/testing';
import { FileStore } from './file-store';

/** A store whose purge never runs: what a controller killed between the save and the purge leaves. */
class NoPurgeStore extends FileStore {
  override purgeJob(): void {}
}

const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

async function start(store: FileStore): Promise<Controller> {
  const backend = new FakeBackend();
  const c = new Controller({
    core: fakeCore(),
    backend,
    store,
    publisher: new MemoryPublisher(),
    clock: (origin) => scaledClock({ scale: 10, originMs: origin ?? 0, source: () => 1_000 }),
    log: pino({ level: 'silent' }),
    id: 'test',
    schedulingIntervalSec: 3600,
    restartCostSec: 10,
  });
  await c.start();
  started.push(c);
  return c;
}

/** Worker 0 of `default/x` sends seqs `from..to-1` at global steps `stepBase + seq + 1`. */
function send(c: Controller, from: number, to: number, stepBase: number): void {
  const task = { namespace: 'default', job: 'x', role: 'worker', index: 0 } as const;
  for (let seq = from; seq < to; seq += 1) {
    const step = stepBase + seq;
    const record = { v: 1, seq, ts: 1_000, framework: 'mxnet', kind: 'batch', epoch: Math.floor(step / 100) };
    const rest = {
      batch: step % 100,
      samplesPerSec: 64,
      stepTime: null,
      loss: 1,
      lossName: 'ce',
      metrics: {},
    };
    c.handleMessage(metricsTopic(task), Buffer.from(JSON.stringify({ ...record, ...rest })));
  }
}

const observed = (c: Controller) => {
  const { records, stepsDone } = (c.get('default/x') as { observations: Record<string, number> })
    .observations;
  return { records, stepsDone };
};

describe.each([
  { name: 'purged on removal', Store: FileStore, linesAfterRemove: 0 },
  { name: 'killed before the purge', Store: NoPurgeStore, linesAfterRemove: 5 },
])('FileStore, job re-created under its name ($name)', ({ Store, linesAfterRemove }) => {
  it('replays only the new job’s records after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recreate-'));
    const lines = () => readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n').length - 1;
    const first = await start(new Store(dir));
    await first.submit(testJobSpec('x'));
    send(first, 0, 5, 5_000);
    await first.remove('default/x');
    expect(lines()).toBe(linesAfterRemove);
    await first.submit(testJobSpec('x'));
    send(first, 0, 2, 0);
    await first.stop();
    started.splice(0);

    const second = await start(new Store(dir));
    expect(observed(second)).toEqual({ records: 2, stepsDone: 2 });
    expect(lines()).toBe(2); // the old job's records are gone from disk either way
    send(second, 2, 3, 0);
    expect(second.ingest.counters()).toMatchObject({ received: 3, duplicates: 0 });
  });
});
