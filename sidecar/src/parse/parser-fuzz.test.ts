import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { metricsRecordSchema } from '../../../shared/src/schemas';
import { parseBuffer } from './parse-buffer';
import { LOG_FORMATS } from '../../../shared/src/schemas';

// Fragments that steer random input into the parsers' interesting paths.
const FRAGMENTS = [
  'Epoch[',
  'Batch [',
  '] ',
  'Speed: ',
  ' samples/sec',
  '\t',
  '=',
  'accuracy',
  'loss',
  'nan',
  'inf',
  '-1e309',
  'Train-',
  'Validation-',
  'Time cost=',
  '[Epoch ',
  '][Batch ',
  'time/interval: ',
  's ',
  'Epoch 1/3',
  '/step',
  ' - ',
  ': ',
  "{'",
  "':",
  '{"',
  '"step":',
  '}',
  'Epoch 0: ',
  '|',
  'it/s',
  'loss = ',
  ', step = ',
  '\r',
  '\n',
  '\x1b[1m',
  '\xff',
  '9'.repeat(30),
  'Saved checkpoint to "x-0003.params"',
  'Epoch[1000000000000] Batch [3]\tSpeed: 1e300 samples/sec\tloss=1e300\n',
  'Epoch[999999] Batch [999999999]\tSpeed: 999999999 samples/sec\tm1=1\tm2=2\tm3=3\n',
];
const noisyText = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string(), fc.integer().map(String)), { maxLength: 60 })
  .map((a) => a.join(''));

describe('parser robustness (property-based)', () => {
  it('random bytes never throw, and every record satisfies the wire schema', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2000 }),
        fc.constantFrom(...LOG_FORMATS),
        fc.integer({ min: 1, max: 300 }),
        (bytes, format, chunkBytes) => {
          const r = parseBuffer(Buffer.from(bytes), { format, chunkBytes, maxLineBytes: 256 });
          for (const rec of r.records)
            expect(metricsRecordSchema.safeParse({ v: 1, seq: 0, ...rec }).success).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('format-shaped noise never throws, and every record satisfies the wire schema', () => {
    fc.assert(
      fc.property(
        noisyText,
        fc.constantFrom(...LOG_FORMATS),
        fc.option(fc.integer({ min: 1, max: 1024 })),
        (text, format, batchSize) => {
          const r = parseBuffer(Buffer.from(text, 'latin1'), { format, batchSize });
          for (const rec of r.records) {
            const check = metricsRecordSchema.safeParse({ v: 1, seq: 0, ...rec });
            expect(check.success, JSON.stringify(rec)).toBe(true);
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe('out-of-range figures', () => {
  it.each([
    [
      'negative interval',
      '[Epoch 0][Batch 1] time/interval: 0.5s loss: 1\n[Epoch 0][Batch 3] time/interval: -5s loss: 1\n',
    ],
    ['30-digit batch', `Epoch[0] Batch [${'9'.repeat(30)}]\tSpeed: 10 samples/sec\tloss=1\n`],
    ['overflowing speed', 'Epoch[0] Batch [1]\tSpeed: 1e999 samples/sec\tloss=1e999\n'],
  ])('%s yields null fields, never an invalid record', (_name, text) => {
    const r = parseBuffer(Buffer.from(text), { batchSize: 32 });
    expect(r.records.length).toBeGreaterThan(0);
    for (const rec of r.records)
      expect(metricsRecordSchema.safeParse({ v: 1, seq: 0, ...rec }).success).toBe(true);
  });
});
