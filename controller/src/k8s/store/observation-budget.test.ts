import { describe, expect, it } from 'vitest';
import type { StoredRecord } from '../../runtime/backend';
import { KEEP_RECENT, recordBytes, thinToBudget } from './observation-budget';

function rec(
  seq: number,
  o: { kind?: 'batch' | 'epoch'; index?: number; role?: 'ps' | 'worker' } = {},
): StoredRecord {
  const kind = o.kind ?? 'batch';
  return {
    task: { namespace: 'default', job: 'j', role: o.role ?? 'worker', index: o.index ?? 0 },
    record: {
      v: 1,
      seq,
      ts: 1000 + seq,
      framework: 'mxnet',
      kind,
      epoch: Math.floor(seq / 50),
      batch: kind === 'batch' ? seq % 50 : null,
      samplesPerSec: kind === 'batch' ? 64 : null,
      stepTime: null,
      loss: 1,
      lossName: 'ce',
      metrics: {},
    },
  };
}

/** 2 workers, a batch record each per seq, and an epoch record every 50 seqs. */
function history(n: number): StoredRecord[] {
  const out: StoredRecord[] = [];
  for (let s = 0; s < n; s++) {
    out.push(rec(s, { index: s % 2 }));
    if (s % 50 === 49) out.push(rec(s, { kind: 'epoch', index: 0 }));
  }
  return out;
}

const bytes = (rs: readonly StoredRecord[]) => rs.reduce((a, r) => a + recordBytes(r), 0);

describe('thinToBudget', () => {
  it('keeps everything that fits', () => {
    const rs = history(100);
    expect(thinToBudget(rs, bytes(rs))).toEqual({ kept: rs, dropped: 0 });
  });

  const cases = [
    { name: 'a quarter of the size', fraction: 0.25 },
    { name: 'half the size', fraction: 0.5 },
    { name: 'just under the size', fraction: 0.95 },
  ];
  it.each(cases)('fits $name, keeps every epoch record and the newest records whole', ({ fraction }) => {
    const rs = history(3000);
    const budget = Math.floor(bytes(rs) * fraction);
    const { kept, dropped } = thinToBudget(rs, budget);
    expect(bytes(kept)).toBeLessThanOrEqual(budget);
    expect(dropped).toBe(rs.length - kept.length);
    expect(kept.filter((r) => r.record.kind === 'epoch')).toEqual(
      rs.filter((r) => r.record.kind === 'epoch'),
    );
    const batches = rs.filter((r) => r.record.kind === 'batch');
    expect(kept.filter((r) => r.record.kind === 'batch').slice(-KEEP_RECENT)).toEqual(
      batches.slice(-KEEP_RECENT),
    );
    // Order is kept, and both workers keep old records (thinned per task, not across tasks).
    const seqs = kept.map((r) => r.record.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const old = kept.filter((r) => r.record.kind === 'batch' && r.record.seq < 1000);
    expect(new Set(old.map((r) => r.task.index))).toEqual(new Set([0, 1]));
  });

  it('drops recent unpinned records before pinned ones, and the oldest pinned ones last', () => {
    const epochs = Array.from({ length: 100 }, (_, i) => rec(i * 50, { kind: 'epoch' }));
    const recent = Array.from({ length: KEEP_RECENT }, (_, i) => rec(5000 + i));
    const budget = bytes(epochs) + bytes(recent.slice(-10));
    expect(thinToBudget([...epochs, ...recent], budget).kept).toEqual([...epochs, ...recent.slice(-10)]);
    const small = bytes(epochs.slice(-10));
    expect(thinToBudget([...epochs, ...recent], small).kept).toEqual(epochs.slice(-10));
  });
});
