import { describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { metricsTopic, statusTopic, type TaskId } from '../../../shared/src/topics';
import { Ingest } from './ingest';

const task: TaskId = { namespace: 'ml', job: 'a', role: 'worker', index: 0 };
const record = (seq: number, over: Partial<MetricsRecord> = {}): MetricsRecord => ({
  v: 1,
  seq,
  ts: 1,
  framework: 'mxnet',
  kind: 'batch',
  epoch: 0,
  batch: seq,
  samplesPerSec: 100,
  stepTime: null,
  loss: 1,
  lossName: 'cross-entropy',
  metrics: {},
  ...over,
});
const bytes = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

const build = () => {
  const records: [TaskId, MetricsRecord][] = [];
  const statuses: string[] = [];
  const ingest = new Ingest({
    onRecord: (t, r) => void records.push([t, r]),
    onStatus: (_t, s) => statuses.push(s.state),
  });
  return { ingest, records, statuses };
};

describe('Ingest', () => {
  it('accepts valid records and statuses', () => {
    const { ingest, records, statuses } = build();
    expect(ingest.handle(metricsTopic(task), bytes(record(0)))).toBe('accepted');
    expect(ingest.handle(statusTopic(task), bytes({ v: 1, state: 'online', ts: 1 }))).toBe('accepted');
    expect(records).toHaveLength(1);
    expect(statuses).toEqual(['online']);
  });

  it('de-duplicates by (task, seq), not by seq alone', () => {
    const { ingest, records } = build();
    const other = { ...task, index: 1 };
    ingest.handle(metricsTopic(task), bytes(record(5)));
    expect(ingest.handle(metricsTopic(task), bytes(record(5)))).toBe('duplicate');
    expect(ingest.handle(metricsTopic(other), bytes(record(5)))).toBe('accepted');
    expect(records).toHaveLength(2);
    expect(ingest.counters()).toMatchObject({ received: 2, duplicates: 1 });
  });

  it.each([
    ['foreign topic', 'other/topic', bytes(record(0)), 'unknown-topic'],
    ['not json', metricsTopic(task), Buffer.from('{'), 'not-json'],
    ['schema', metricsTopic(task), bytes({ ...record(0), v: 9 }), 'schema'],
    ['not utf8', metricsTopic(task), Buffer.from([0xff]), 'not-utf8'],
    ['bad status', statusTopic(task), bytes({ v: 1, state: 'zombie', ts: 1 }), 'schema'],
  ])('counts a rejection: %s', (_n, topic, payload, reason) => {
    const { ingest } = build();
    expect(ingest.handle(topic, payload)).toBe(reason);
    expect(ingest.counters().rejected).toEqual({ [reason]: 1 });
  });

  it('keeps going after a bad message and after a failing sink', () => {
    let calls = 0;
    const ingest = new Ingest({
      onRecord: () => {
        calls += 1;
        if (calls === 1) throw new Error('boom');
      },
      onStatus: () => {},
    });
    ingest.handle(metricsTopic(task), Buffer.from('garbage'));
    ingest.handle(metricsTopic(task), bytes(record(0)));
    ingest.handle(metricsTopic(task), bytes(record(1)));
    expect(calls).toBe(2);
    expect(ingest.counters()).toMatchObject({ received: 1, sinkErrors: 1, rejectedTotal: 1 });
  });

  it('accepts a resent record the sink could not use the first time (not a duplicate)', () => {
    let known = false;
    const records: number[] = [];
    const ingest = new Ingest({
      onRecord: (_t, r) => {
        if (!known) throw new Error('record for unknown job');
        records.push(r.seq);
      },
      onStatus: () => {},
    });
    ingest.handle(metricsTopic(task), bytes(record(0)));
    known = true;
    expect(ingest.handle(metricsTopic(task), bytes(record(0)))).toBe('accepted');
    expect(records).toEqual([0]);
    expect(ingest.perTask().get('ml/a/worker/0')).toEqual({ received: 1, maxSeq: 0 });
  });

  it('forgets a removed job, so the same name starts from seq 0 again', () => {
    const { ingest, records } = build();
    const other: TaskId = { ...task, job: 'b' };
    ingest.handle(metricsTopic(task), bytes(record(0)));
    ingest.handle(metricsTopic(other), bytes(record(0)));
    ingest.forgetJob('ml', 'a');
    expect(ingest.handle(metricsTopic(task), bytes(record(0)))).toBe('accepted');
    expect(ingest.handle(metricsTopic(other), bytes(record(0)))).toBe('duplicate');
    expect(records).toHaveLength(3);
  });

  it('ignores plan topics and cleared retained statuses', () => {
    const { ingest } = build();
    expect(ingest.handle('optimus/v1/ml/a/plan', bytes({}))).toBe('ignored');
    expect(ingest.handle(statusTopic(task), Buffer.alloc(0))).toBe('ignored');
  });

  it('replayed records are de-duplicated against live ones', () => {
    const { ingest, records } = build();
    ingest.replay(task, record(0));
    expect(ingest.handle(metricsTopic(task), bytes(record(0)))).toBe('duplicate');
    expect(records).toHaveLength(1);
    expect(ingest.perTask().get('ml/a/worker/0')).toEqual({ received: 1, maxSeq: 0 });
  });
});

describe('Ingest: wire v2, unknown jobs, stored listeners', () => {
  const batch = (...records: unknown[]) => bytes({ v: 2, records });

  it('takes every good record of a batch and counts each bad one on its own', () => {
    const { ingest, records } = build();
    const outcome = ingest.handle(
      metricsTopic(task),
      batch(record(0), { ...record(1), epoch: 1e12 }, record(2)),
    );
    expect(outcome).toBe('out-of-range');
    expect(records.map(([, r]) => r.seq)).toEqual([0, 2]);
    expect(ingest.counters()).toMatchObject({ received: 2, rejected: { 'out-of-range': 1 } });
  });

  it('counts records for unknown jobs and does not mark them seen (a resend is accepted later)', () => {
    let known = false;
    const ingest = new Ingest({ onRecord: () => (known ? 'stored' : 'unknown-job'), onStatus: () => {} });
    expect(ingest.handle(metricsTopic(task), bytes(record(0)))).toBe('unknown-job');
    known = true;
    expect(ingest.handle(metricsTopic(task), bytes(record(0)))).toBe('accepted');
    expect(ingest.counters()).toMatchObject({ received: 1, rejected: { 'unknown-job': 1 } });
  });

  it('tells listeners what is stored — duplicates too, so a sender that missed the news hears it again', () => {
    const { ingest } = build();
    const heard: string[] = [];
    const forgotten: string[] = [];
    ingest.listen({
      stored: (t, seq, seqs) => heard.push(`${t.index}:${seq}:${JSON.stringify(seqs.rangeOf(seq))}`),
      forgotten: (tasks) => forgotten.push(...tasks.map((t) => t.job)),
    });
    ingest.handle(metricsTopic(task), batch(record(0), record(1)));
    ingest.handle(metricsTopic(task), bytes(record(1)));
    expect(heard).toEqual([
      '0:0:{"from":0,"through":0}',
      '0:1:{"from":0,"through":1}',
      '0:1:{"from":0,"through":1}',
    ]);
    ingest.forgetJob('ml', 'a');
    expect(forgotten).toEqual(['a']);
  });
});
