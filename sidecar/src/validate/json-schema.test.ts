import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FRAMEWORKS, metricsRecordSchema, RECORD_KINDS, taskStatusSchema } from '../../../shared/src/schemas';
import { taskIdSchema } from '../../../shared/src/topics';
import { wireSchemasFromZod } from './emit-wire-schemas';
import { compileFastCheck } from './fast-check';
import { compileValidator } from './json-schema';
import { validateMetricsRecord, validateTaskId, validateTaskStatus } from './wire';

// Values near the schema's edges: the validator must agree with zod on every one of them.
const number = fc.oneof(
  fc.double(),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0, -0, 1e300, Number.MAX_SAFE_INTEGER + 2, NaN, Infinity),
);
const nullableNumber = fc.oneof(number, fc.constant(null), fc.constant('1'));
const name = fc.oneof(fc.string({ maxLength: 5 }), fc.string({ minLength: 120, maxLength: 140 }));
const record = fc.record(
  {
    v: fc.constantFrom(1, 2, '1'),
    seq: number,
    ts: number,
    framework: fc.constantFrom(...FRAMEWORKS, 'caffe'),
    kind: fc.constantFrom(...RECORD_KINDS, 'step'),
    epoch: nullableNumber,
    batch: nullableNumber,
    samplesPerSec: nullableNumber,
    stepTime: nullableNumber,
    loss: nullableNumber,
    lossName: fc.oneof(name, fc.constant(null), fc.constant(3)),
    metrics: fc.oneof(fc.dictionary(name, number, { maxKeys: 3 }), fc.constant(null), fc.constant([])),
    extra: fc.constant(true),
  },
  {
    requiredKeys: [
      'v',
      'seq',
      'ts',
      'framework',
      'kind',
      'epoch',
      'batch',
      'samplesPerSec',
      'stepTime',
      'loss',
      'lossName',
      'metrics',
    ],
  },
);

// Valid records with at most one field replaced by an edge value: most pass, each check is probed.
const edge = fc.oneof(
  number,
  fc.constant(null),
  fc.constant(''),
  fc.constant('x'.repeat(129)),
  fc.constant({}),
);
const nearlyValid = fc
  .tuple(
    fc.record({
      v: fc.constant(1),
      seq: fc.oneof(fc.constant(0), fc.nat()),
      ts: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e13, noNaN: true })),
      framework: fc.constantFrom(...FRAMEWORKS),
      kind: fc.constantFrom(...RECORD_KINDS),
      epoch: fc.oneof(fc.constant(null), fc.constant(0), fc.nat()),
      batch: fc.oneof(fc.constant(null), fc.nat()),
      samplesPerSec: fc.oneof(
        fc.constant(null),
        fc.constant(0),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
      ),
      stepTime: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 100, noNaN: true })),
      loss: fc.oneof(fc.constant(null), fc.double({ min: -10, max: 10, noNaN: true })),
      lossName: fc.oneof(fc.constant(null), fc.string({ maxLength: 128 })),
      metrics: fc.dictionary(
        fc.string({ maxLength: 128 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        {
          maxKeys: 3,
        },
      ),
    }),
    fc.option(
      fc.tuple(
        fc.constantFrom(
          'v',
          'seq',
          'ts',
          'epoch',
          'batch',
          'samplesPerSec',
          'stepTime',
          'loss',
          'lossName',
          'metrics',
          'kind',
        ),
        edge,
      ),
    ),
  )
  .map(([r, change]) => (change === null ? r : { ...r, [change[0]]: change[1] }));

describe('JSON-Schema validators generated from the shared zod schemas', () => {
  it('agree with metricsRecordSchema', () => {
    fc.assert(
      fc.property(record, (r) => {
        expect(validateMetricsRecord(r) === null).toBe(metricsRecordSchema.safeParse(r).success);
      }),
      { numRuns: 3000 },
    );
  });

  it('use a generated check that agrees with the reference validator on every value', () => {
    const schema = wireSchemasFromZod().metricsRecord;
    const fast = compileFastCheck(schema);
    const reference = compileValidator(schema);
    fc.assert(
      fc.property(fc.oneof(nearlyValid, record, fc.anything()), (r) => {
        expect(fast(r)).toBe(reference(r) === null);
      }),
      { numRuns: 5000 },
    );
  });

  it('accept a typical record and reject it with one field wrong', () => {
    const ok = {
      v: 1,
      seq: 5,
      ts: 1,
      framework: 'mxnet',
      kind: 'batch',
      epoch: 0,
      batch: 50,
      samplesPerSec: 10,
      stepTime: 3.2,
      loss: 0.5,
      lossName: '1-accuracy',
      metrics: { accuracy: 0.5 },
    };
    expect(validateMetricsRecord(ok)).toBeNull();
    expect(validateMetricsRecord({ ...ok, epoch: -1 })).toMatch(/epoch/);
    expect(validateMetricsRecord({ ...ok, metrics: { a: Infinity } })).toMatch(/metrics/);
  });

  it('agree with taskIdSchema and taskStatusSchema', () => {
    const task = fc.record({
      namespace: fc.oneof(fc.string(), fc.constantFrom('ml', 'a-b', '-a', 'A')),
      job: fc.constantFrom('j', 'x'.repeat(64)),
      role: fc.constantFrom('ps', 'worker', 'chief'),
      index: number,
    });
    const status = fc.record({
      v: fc.constantFrom(1, 2),
      state: fc.constantFrom('online', 'done', 'lost', 'gone'),
      ts: number,
    });
    fc.assert(
      fc.property(task, status, (t, s) => {
        expect(validateTaskId(t) === null).toBe(taskIdSchema.safeParse(t).success);
        expect(validateTaskStatus(s) === null).toBe(taskStatusSchema.safeParse(s).success);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses keywords it does not implement, so schema growth fails the build loudly', () => {
    expect(() => compileValidator({ type: 'array', items: { type: 'number' } })).toThrow(/items/);
  });
});
