import { describe, expect, it } from 'vitest';
import { decodePayload, RejectCounter } from './decode';
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
    ['negative seq', JSON.stringify({ ...good, seq: -1 }), 'schema'],
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
