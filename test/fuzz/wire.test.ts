/**
 * Property-based fuzzing (fast-check) of the controller's wire decoders and intake: whatever bytes a
 * sidecar, a broken client or an attacker puts on a metrics or status topic, decoding never throws,
 * every record it lets through is inside the schema's physical bounds, and the intake accounts for
 * every record exactly once (accepted, or rejected under one reason).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ingest } from '../../controller/src/runtime/ingest';
import { BOUNDS, inBounds } from '../../shared/src/bounds';
import { decodeMetricsPayload, decodePayload } from '../../shared/src/decode';
import { metricsRecordSchema, taskStatusSchema, type MetricsRecord } from '../../shared/src/schemas';
import { metricsTopic, statusTopic, taskKey, type TaskId } from '../../shared/src/topics';
import { RUNS } from './runs';

const good: MetricsRecord = {
  v: 1,
  seq: 7,
  ts: 1_700_000_000_000,
  framework: 'mxnet',
  kind: 'batch',
  epoch: 2,
  batch: 50,
  samplesPerSec: 120.5,
  stepTime: 0.265,
  loss: 1.23,
  lossName: 'cross-entropy',
  metrics: { accuracy: 0.61 },
};

/** Numbers a hostile record would carry: huge, tiny, negative, non-integers, non-finite as JSON can say. */
const wildNumber = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -1, 1e12, 1e300, -1e300, 2 ** 53, 2 ** 53 + 2, 1e-300, Number.MAX_VALUE),
);
const wildValue = fc.oneof(
  wildNumber,
  fc.string({ maxLength: 300 }),
  fc.constant(null),
  fc.boolean(),
  fc.jsonValue(),
);
const FIELDS = Object.keys(good) as (keyof MetricsRecord)[];
const mutatedRecord = fc
  .array(fc.tuple(fc.constantFrom(...FIELDS, 'extra' as const), wildValue), { maxLength: 4 })
  .map((edits) => {
    const r: Record<string, unknown> = { ...good, metrics: { ...good.metrics } };
    for (const [k, v] of edits) r[k] = v;
    return r;
  });

function expectBounded(r: MetricsRecord): void {
  expect(metricsRecordSchema.safeParse(r).success).toBe(true);
  expect(inBounds('seq', r.seq) && inBounds('ts', r.ts)).toBe(true);
  for (const [field, v] of [
    ['epoch', r.epoch],
    ['batch', r.batch],
    ['samplesPerSec', r.samplesPerSec],
    ['stepTime', r.stepTime],
    ['value', r.loss],
  ] as const)
    if (v !== null) expect(inBounds(field, v), `${field} ${v}`).toBe(true);
  expect(Object.keys(r.metrics).length).toBeLessThanOrEqual(BOUNDS.metricCount.max);
  for (const v of Object.values(r.metrics)) expect(inBounds('value', v)).toBe(true);
}

describe('metrics payload decoder (shared/src/decode.ts)', () => {
  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
        const d = decodeMetricsPayload(bytes);
        if (d.ok) for (const r of d.records) if (r.ok) expectBounded(r.value);
      }),
      { numRuns: RUNS.metricsPayloadBytes },
    );
  });

  it('never throws on arbitrary JSON, and lets through only bounded records', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (json) => {
        const d = decodeMetricsPayload(JSON.stringify(json) ?? 'null');
        if (d.ok) for (const r of d.records) if (r.ok) expectBounded(r.value);
      }),
      { numRuns: RUNS.metricsPayloadJson },
    );
  });

  it('judges a mutated record by its fields: accepted only when every figure is in bounds', () => {
    fc.assert(
      fc.property(mutatedRecord, (r) => {
        const d = decodePayload(metricsRecordSchema, JSON.stringify(r));
        if (d.ok) expectBounded(d.value);
        else expect(['schema', 'out-of-range', 'not-json']).toContain(d.reason);
      }),
      { numRuns: RUNS.metricsRecordMutations },
    );
  });

  it('decodes a v2 batch record by record: one verdict per record, the good ones intact', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(mutatedRecord, fc.constant(good)), { minLength: 1, maxLength: 40 }),
        (records) => {
          const d = decodeMetricsPayload(JSON.stringify({ v: 2, records }));
          expect(d.ok).toBe(true);
          if (!d.ok) return;
          expect(d.records).toHaveLength(records.length);
          d.records.forEach((r, i) => {
            // What crossed the wire is the record's JSON (-0 is sent as 0, fast-check generates both).
            if (r.ok)
              expect(r.value).toEqual(metricsRecordSchema.parse(JSON.parse(JSON.stringify(records[i]))));
          });
        },
      ),
      { numRuns: RUNS.metricsBatches },
    );
  });

  it('never throws on arbitrary status payloads', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 512 }),
          fc.jsonValue().map((j) => Buffer.from(JSON.stringify(j) ?? '')),
        ),
        (bytes) => {
          const d = decodePayload(taskStatusSchema, bytes);
          if (d.ok) expect(inBounds('ts', d.value.ts)).toBe(true);
        },
      ),
      { numRuns: RUNS.statusPayloads },
    );
  });
});

const segment = fc.oneof(fc.constantFrom('ml', 'a', 'job-1', 'x'), fc.string({ maxLength: 8 }));
const task: fc.Arbitrary<TaskId> = fc.record({
  namespace: fc.constantFrom('ml', 'research'),
  job: fc.constantFrom('a', 'b'),
  role: fc.constantFrom('ps', 'worker', 'scheduler'),
  index: fc.integer({ min: 0, max: 3 }),
});
const topic = fc.oneof(
  task.map(metricsTopic),
  task.map(statusTopic),
  fc.array(segment, { maxLength: 8 }).map((s) => ['optimus', 'v1', ...s].join('/')),
  fc.string({ maxLength: 40 }),
);
const payload = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  mutatedRecord.map((r) => Buffer.from(JSON.stringify(r))),
  fc
    .array(
      fc.oneof(
        mutatedRecord,
        fc.integer({ min: 0, max: 30 }).map((seq) => ({ ...good, seq })),
      ),
      { minLength: 1, maxLength: 10 },
    )
    .map((records) => Buffer.from(JSON.stringify({ v: 2, records }))),
);

describe('controller intake (controller/src/runtime/ingest.ts)', () => {
  const build = (delivered: Set<string>) =>
    new Ingest({
      onRecord: (t, r) => {
        const key = `${taskKey(t)}#${r.seq}`;
        expect(delivered.has(key), `${key} delivered twice`).toBe(false);
        delivered.add(key);
        expectBounded(r);
        return 'stored';
      },
      onStatus: () => {},
    });

  it('accounts for every record of a metrics message exactly once, and delivers each (task, seq) once', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(task, payload), { maxLength: 25 }), (messages) => {
        const delivered = new Set<string>();
        const ingest = build(delivered);
        let verdicts = 0;
        for (const [t, p] of messages) {
          ingest.handle(metricsTopic(t), p);
          const d = decodeMetricsPayload(p);
          verdicts += d.ok ? d.records.length : 1;
        }
        const c = ingest.counters();
        expect(c.received).toBe(delivered.size);
        expect(c.received + c.rejectedTotal).toBe(verdicts);
      }),
      { numRuns: RUNS.ingestMessages },
    );
  });

  it('never throws on any topic with any payload', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(topic, payload), { maxLength: 25 }), (messages) => {
        const ingest = build(new Set());
        for (const [t, p] of messages) expect(() => ingest.handle(t, p)).not.toThrow();
      }),
      { numRuns: RUNS.ingestTopics },
    );
  });
});
