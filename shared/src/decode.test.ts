import { describe, expect, it } from 'vitest';
import { BOUNDS } from './bounds';
import { decodeMetricsPayload, decodePayload, RejectCounter } from './decode';
import { metricsRecordSchema, taskStatusSchema } from './schemas';

const good = {
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
  metrics: { 'cross-entropy': 1.23, accuracy: 0.61 },
};

describe('decodePayload', () => {
  it('accepts a valid metrics record from bytes', () => {
    const r = decodePayload(metricsRecordSchema, Buffer.from(JSON.stringify(good)));
    expect(r).toEqual({ ok: true, value: good });
  });

  it.each([
    ['not-json', '{"v":1,', 'not-json'],
    ['wrong version', JSON.stringify({ ...good, v: 2 }), 'schema'],
    ['unknown field', JSON.stringify({ ...good, extra: 1 }), 'schema'],
    ['negative seq', JSON.stringify({ ...good, seq: -1 }), 'out-of-range'],
    ['fractional seq', JSON.stringify({ ...good, seq: 1.5 }), 'schema'],
    ['bad kind', JSON.stringify({ ...good, kind: 'step' }), 'schema'],
    ['non-finite metric', JSON.stringify({ ...good, metrics: { a: 'x' } }), 'schema'],
  ])('rejects %s', (_name, payload, reason) => {
    const r = decodePayload(metricsRecordSchema, payload);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });

  it('rejects invalid UTF-8 and oversized payloads', () => {
    expect(decodePayload(taskStatusSchema, new Uint8Array([0xff, 0xfe]))).toMatchObject({
      reason: 'not-utf8',
    });
    expect(decodePayload(taskStatusSchema, 'x'.repeat(70_000))).toMatchObject({ reason: 'too-large' });
  });

  it.each([
    ['epoch 1e12', { epoch: 1e12 }, 'epoch'],
    ['speed 1e300', { samplesPerSec: 1e300 }, 'samplesPerSec'],
    ['a step of a month', { stepTime: 31 * 86400 }, 'stepTime'],
    ['loss 1e20', { loss: 1e20 }, 'loss'],
    ['seq beyond 2^53', { seq: 2 ** 60 }, 'seq'],
    ['ts in the year 3000', { ts: Date.UTC(3000, 0) }, 'ts'],
    [
      '65 metrics',
      { metrics: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`m${i}`, i])) },
      'metrics',
    ],
    ['a metric of 1e300', { metrics: { a: 1e300 } }, 'metrics'],
  ])(
    'refuses a schema-valid but impossible record as out-of-range, naming the field: %s',
    (_n, over, field) => {
      const r = decodePayload(metricsRecordSchema, JSON.stringify({ ...good, ...over }));
      expect(r).toMatchObject({ ok: false, reason: 'out-of-range', field });
    },
  );

  it('accepts figures at their bounds', () => {
    const edge = {
      ...good,
      epoch: BOUNDS.epoch.max,
      samplesPerSec: BOUNDS.samplesPerSec.max,
      seq: BOUNDS.seq.max,
    };
    expect(decodePayload(metricsRecordSchema, JSON.stringify(edge)).ok).toBe(true);
  });

  it('a shape error wins over a bound: a record that is also malformed is `schema`', () => {
    const r = decodePayload(metricsRecordSchema, JSON.stringify({ ...good, epoch: 1e12, kind: 'step' }));
    expect(r).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('decodes v1 and v2 metrics payloads, judging each record of a batch on its own', () => {
    expect(decodeMetricsPayload(JSON.stringify(good))).toEqual({
      ok: true,
      records: [{ ok: true, value: good }],
    });
    const batch = { v: 2, records: [good, { ...good, seq: 8, epoch: 1e12 }, { ...good, seq: 9 }] };
    const r = decodeMetricsPayload(JSON.stringify(batch));
    expect(r.ok && r.records.map((x) => (x.ok ? x.value.seq : x.reason))).toEqual([7, 'out-of-range', 9]);
    expect(decodeMetricsPayload(JSON.stringify({ v: 2, records: [] }))).toMatchObject({ reason: 'schema' });
    expect(decodeMetricsPayload(JSON.stringify({ v: 2, records: [good], x: 1 }))).toMatchObject({
      reason: 'schema',
    });
    expect(decodeMetricsPayload(JSON.stringify({ v: 3, records: [good] }))).toMatchObject({
      ok: true,
      records: [{ ok: false, reason: 'schema' }],
    });
  });

  it('counts rejections by reason', () => {
    const c = new RejectCounter();
    c.add('schema');
    c.add('schema');
    c.add('not-json');
    expect(c.get('schema')).toBe(2);
    expect(c.total()).toBe(3);
    expect(c.snapshot()).toEqual({ schema: 2, 'not-json': 1 });
  });
});
