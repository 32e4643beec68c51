import { describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import type { JobSpec } from './job-spec';
import { testJobSpec } from './testing';
import { findSpan, JobObservations, type ShapeSpan } from './observations';

const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  ...testJobSpec('a'),
  ...over,
});
const worker = (index: number): TaskId => ({ namespace: 'default', job: 'a', role: 'worker', index });
let seq = 0;
const batch = (ts: number, epoch: number, b: number, samplesPerSec: number, loss = 1): MetricsRecord => ({
  v: 1,
  seq: seq++,
  ts,
  framework: 'mxnet',
  kind: 'batch',
  epoch,
  batch: b,
  samplesPerSec,
  stepTime: null,
  loss,
  lossName: 'cross-entropy',
  metrics: {},
});
const spans: ShapeSpan[] = [
  { shape: { ps: 1, workers: 2 }, since: 0, until: 100, fitted: false },
  { shape: { ps: 2, workers: 4 }, since: 100, until: null, fitted: true },
];

describe('JobObservations', () => {
  it('turns worker 0 records into loss points at global steps', () => {
    const o = new JobObservations(spec());
    o.add(worker(0), batch(10, 0, 49, 64, 2), spans);
    o.add(
      worker(0),
      { ...batch(11, 0, 0, 0), kind: 'epoch', batch: null, samplesPerSec: null, loss: 1.5 },
      spans,
    );
    o.add(worker(1), batch(12, 1, 9, 64, 9), spans); // not worker 0: no loss point
    expect(o.lossPoints()).toEqual([
      { step: 50, loss: 2 },
      { step: 100, loss: 1.5 },
    ]);
    expect(o.stepsDone()).toBe(110);
  });

  it('averages sync worker speeds per shape, skipping each worker’s first record in a span', () => {
    const o = new JobObservations(spec());
    // Span 0: 2 workers, per-worker batch 32: 64 samples/s = 2 steps/s; the first record (warm-up) is 999.
    for (const w of [0, 1]) {
      o.add(worker(w), batch(1, 0, 0, 999), spans);
      o.add(worker(w), batch(2, 0, 1, 64), spans);
      o.add(worker(w), batch(3, 0, 2, 64), spans);
    }
    // Span 1: 4 workers, per-worker batch 16: 64 samples/s = 4 steps/s.
    o.add(worker(0), batch(101, 0, 3, 1), spans);
    o.add(worker(0), batch(102, 0, 4, 64), spans);
    expect(o.speedSamples(spans)).toEqual([
      { ps: 1, workers: 2, stepsPerSec: 2, weight: 4 },
      { ps: 2, workers: 4, stepsPerSec: 4, weight: 1 },
    ]);
    expect(o.samplesInSpan(0)).toBe(4);
    expect(o.workerStepTimes(1)).toEqual({ 0: 0.25 });
  });

  it('keeps its speed samples until a record arrives or a span is added', () => {
    const o = new JobObservations(spec());
    const mine: ShapeSpan[] = [{ shape: { ps: 1, workers: 2 }, since: 0, until: null, fitted: false }];
    for (const t of [1, 2]) o.add(worker(0), batch(t, 0, t, 64), mine);
    const first = o.speedSamples(mine);
    expect(o.speedSamples(mine)).toBe(first);
    o.add(worker(0), batch(3, 0, 3, 128), mine);
    const second = o.speedSamples(mine);
    expect(second).not.toBe(first);
    expect(second[0]?.weight).toBe(2);
    // A new span (a resize) without any record yet: the records before it keep their shape.
    mine[0]!.until = 10;
    mine.push({ shape: { ps: 2, workers: 2 }, since: 10, until: null, fitted: true });
    const third = o.speedSamples(mine);
    expect(third).not.toBe(second);
    expect(third).toEqual(second);
    // Another spans array (a record read back after a restart) is never answered from the cache.
    expect(o.speedSamples([...mine])).not.toBe(third);
  });

  it('sums async worker speeds', () => {
    const o = new JobObservations(spec({ mode: 'async', batchSize: 32 }));
    for (const w of [0, 1]) for (const t of [1, 2]) o.add(worker(w), batch(t, 0, t, 64), spans);
    expect(o.speedSamples(spans)).toEqual([{ ps: 1, workers: 2, stepsPerSec: 4, weight: 2 }]);
  });

  it.each([
    ['before any span', -1, -1],
    ['in the first', 50, 0],
    ['at a boundary', 100, 1],
    ['in the open span', 5000, 1],
  ])('finds the span of a timestamp %s', (_n, ts, index) => {
    expect(findSpan(spans, ts)).toBe(index);
  });
});
