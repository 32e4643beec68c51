/**
 * The all-reduce model is safe for any valid shape, whatever samples it was fitted on: finite and
 * positive, the interval around the point, and the step time never shorter on more servers, on a
 * larger per-worker batch, or on more workers at the same per-worker batch.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitAllReduceSpeed } from './allreduce-fit';

const sample = fc
  .record({
    workers: fc.integer({ min: 1, max: 64 }),
    serversShare: fc.double({ min: 0, max: 1, noNaN: true }),
    stepsPerSec: fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
    localBatch: fc.option(fc.double({ min: 0.5, max: 4096, noNaN: true }), { nil: undefined }),
    weight: fc.option(fc.double({ min: 0.01, max: 100, noNaN: true }), { nil: undefined }),
  })
  .map(({ workers, serversShare, ...rest }) => ({
    workers,
    servers: 1 + Math.floor(serversShare * (workers - 1)),
    ...rest,
  }));

const shape = fc.record({
  workers: fc.double({ min: 1, max: 2048, noNaN: true }),
  serversShare: fc.double({ min: 0, max: 1, noNaN: true }),
  localBatch: fc.double({ min: 0.01, max: 1e5, noNaN: true }),
});

describe('fitAllReduceSpeed on arbitrary samples', () => {
  it('predicts finite, positive, monotone speeds at any valid shape', () => {
    fc.assert(
      fc.property(
        fc.array(sample, { minLength: 1, maxLength: 14 }),
        fc.option(fc.double({ min: 1, max: 1e4, noNaN: true }), { nil: undefined }),
        fc.array(shape, { minLength: 1, maxLength: 6 }),
        (samples, globalBatch, shapes) => {
          const model = fitAllReduceSpeed(samples, { globalBatch });
          for (const { workers: w, serversShare, localBatch: m } of shapes) {
            const n = 1 + serversShare * (w - 1);
            const p = model.predict(w, n, m);
            expect(Number.isFinite(p.stepsPerSec) && p.stepsPerSec > 0).toBe(true);
            expect(p.lower).toBeLessThanOrEqual(p.stepsPerSec);
            expect(p.upper).toBeGreaterThanOrEqual(p.stepsPerSec);
            expect(Number.isFinite(p.lower) && Number.isFinite(p.upper) && p.lower > 0).toBe(true);
            const slack = 1 + 1e-9;
            expect(model.predict(w, w, m).stepsPerSec).toBeLessThanOrEqual(p.stepsPerSec * slack);
            expect(model.predict(w, n, 2 * m).stepsPerSec).toBeLessThanOrEqual(p.stepsPerSec * slack);
            expect(model.predict(2 * w, n, m).stepsPerSec).toBeLessThanOrEqual(p.stepsPerSec * slack);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
