import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoredRecord } from '../runtime/backend';
import { FileStore } from './file-store';

const rec = (seq: number): StoredRecord => ({
  task: { namespace: 'default', job: 'a', role: 'worker', index: 0 },
  record: {
    v: 1,
    seq,
    ts: 1,
    framework: 'mxnet',
    kind: 'batch',
    epoch: 0,
    batch: 1,
    samplesPerSec: 1,
    stepTime: null,
    loss: 1,
    lossName: 'x',
    metrics: {},
  },
});

describe('FileStore', () => {
  it('round-trips the document and the records, and survives a torn last line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    const a = new FileStore(dir);
    expect(await a.load()).toEqual({ doc: null, records: [] });
    a.appendRecord(rec(0));
    a.appendRecord(rec(1));
    await a.saveDocument({ v: 1, originMs: 5, decisions: 2, jobs: [] });
    await a.close();
    appendFileSync(join(dir, 'records.jsonl'), '{"task":');
    const b = await new FileStore(dir).load();
    expect(b.doc).toEqual({ v: 1, originMs: 5, decisions: 2, jobs: [] });
    expect(b.records.map((r) => r.record.seq)).toEqual([0, 1]);
  });
});
