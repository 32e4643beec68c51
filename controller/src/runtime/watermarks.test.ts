import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { storedTopic, type TaskId } from '../../../shared/src/topics';
import { SeqSet } from './seq-set';
import { WatermarkPublisher } from './watermarks';

const task: TaskId = { namespace: 'ml', job: 'a', role: 'worker', index: 0 };

function build(durable: () => Promise<boolean>) {
  const sent: [string, string][] = [];
  const w = new WatermarkPublisher({
    publisher: { publish: async (t, p) => void sent.push([t, p]) },
    durable,
    intervalMs: 1000,
    now: () => 5,
  });
  return { w, sent };
}

describe('WatermarkPublisher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('publishes one watermark per task per interval, the run containing the latest record, after durable()', async () => {
    const seqs = new SeqSet();
    const { w, sent } = build(async () => true);
    for (const s of [3, 4, 5, 9]) {
      seqs.add(s);
      w.stored(task, s, seqs);
    }
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent).toEqual([[storedTopic(task), '{"v":1,"from":9,"through":9,"ts":5}']]);
  });

  it('waits while the store is not durable, and never covers what came in after durable() was asked', async () => {
    const seqs = new SeqSet();
    let ok = false;
    let resolveDurable: (v: boolean) => void = () => {};
    const { w, sent } = build(() => new Promise<boolean>((r) => (resolveDurable = r)));
    seqs.add(0);
    w.stored(task, 0, seqs);
    await vi.advanceTimersByTimeAsync(1000);
    seqs.add(1); // appended while durable() runs: not vouched for by it
    w.stored(task, 1, seqs);
    resolveDurable(ok);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([]);
    expect(w.stats.deferred).toBe(1);
    ok = true;
    await vi.advanceTimersByTimeAsync(1000);
    resolveDurable(ok);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.at(-1)).toEqual([storedTopic(task), '{"v":1,"from":0,"through":1,"ts":5}']);
  });

  it('clears the retained watermarks of a removed job', () => {
    const { w, sent } = build(async () => true);
    w.forgotten([task]);
    expect(sent).toEqual([[storedTopic(task), '']]);
  });
});
