import { describe, expect, it } from 'vitest';
import { effectiveGlobalBatch, perWorkerBatch } from './batch';

describe('perWorkerBatch: what batchSize means', () => {
  it.each([
    { name: 'sync splits the global batch', mode: 'sync', batch: 256, workers: 4, per: 64, global: 256 },
    { name: 'sync drops the remainder', mode: 'sync', batch: 256, workers: 3, per: 85, global: 255 },
    { name: 'sync, one worker', mode: 'sync', batch: 256, workers: 1, per: 256, global: 256 },
    { name: 'sync never goes below 1', mode: 'sync', batch: 4, workers: 8, per: 1, global: 8 },
    { name: 'sync, zero workers counts as one', mode: 'sync', batch: 32, workers: 0, per: 32, global: 32 },
    { name: 'async is per worker already', mode: 'async', batch: 64, workers: 4, per: 64, global: 64 },
    { name: 'async ignores the worker count', mode: 'async', batch: 64, workers: 1, per: 64, global: 64 },
  ] as const)('$name', ({ mode, batch, workers, per, global }) => {
    expect(perWorkerBatch(mode, batch, workers)).toBe(per);
    expect(Number.isInteger(perWorkerBatch(mode, batch, workers))).toBe(true);
    expect(effectiveGlobalBatch(mode, batch, workers)).toBe(global);
  });

  it('refuses a batch size below 1', () => {
    expect(() => perWorkerBatch('sync', 0, 2)).toThrow(/batchSize/);
  });
});
