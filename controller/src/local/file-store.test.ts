import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeDocument, StoredRecord } from '../runtime/backend';
import { newJobRecord } from '../runtime/job-record';
import { testJobSpec } from '../runtime/testing';
import { FileStore } from './file-store';

const rec = (seq: number, o: { job?: string; incarnation?: string } = {}): StoredRecord => ({
  task: { namespace: 'default', job: o.job ?? 'a', role: 'worker', index: 0 },
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
  ...(o.incarnation !== undefined && { incarnation: o.incarnation }),
});

/** A document holding one job per `[name, incarnation]`. */
const docOf = (...jobs: [string, string | undefined][]): RuntimeDocument => ({
  v: 1,
  originMs: 0,
  decisions: 0,
  jobs: jobs.map(([name, inc]) => newJobRecord(testJobSpec(name), 0, inc)),
});

const seqsOf = (rs: readonly StoredRecord[]) => rs.map((r) => `${r.task.job}${r.record.seq}`);
const linesIn = (dir: string) => readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n').length - 1;

describe('FileStore', () => {
  it('round-trips the document and the records, and survives a torn last line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    const a = new FileStore(dir);
    expect(await a.load()).toEqual({ doc: null, records: [] });
    a.appendRecord(rec(0));
    a.appendRecord(rec(1));
    const doc = { ...docOf(['a', undefined]), originMs: 5, decisions: 2 };
    await a.saveDocument(doc);
    await a.close();
    appendFileSync(join(dir, 'records.jsonl'), '{"task":');
    const store = new FileStore(dir);
    const b = await store.load();
    expect(b.doc).toEqual(doc);
    expect(b.records.map((r) => r.record.seq)).toEqual([0, 1]);
    // Cut off and counted: the file ends on its last whole line again.
    expect(store.integrity.tornTailBytes).toBe('{"task":'.length);
    expect(readFileSync(join(dir, 'records.jsonl'), 'utf8').endsWith('}\n')).toBe(true);
  });

  it('drops, on load, the records of removed jobs and of earlier jobs under the same name', async () => {
    // What a crash between saving the document without a job and purging its records leaves.
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    const a = new FileStore(dir);
    a.appendRecord(rec(0)); // a legacy record (no incarnation) of job a
    a.appendRecord(rec(1, { incarnation: 'old' }));
    a.appendRecord(rec(0, { job: 'gone', incarnation: 'g' }));
    a.appendRecord(rec(0, { incarnation: 'new' }));
    await a.saveDocument(docOf(['a', 'new']));
    await a.close();
    const loaded = await new FileStore(dir).load();
    expect(seqsOf(loaded.records)).toEqual(['a0', 'a0']);
    expect(loaded.records.map((r) => r.incarnation)).toEqual([undefined, 'new']);
    // Compacted on disk, and appends go on after the kept lines.
    expect(linesIn(dir)).toBe(2);
    const b = new FileStore(dir);
    b.appendRecord(rec(1, { incarnation: 'new' }));
    expect(seqsOf((await b.load()).records)).toEqual(['a0', 'a0', 'a1']);
  });

  it('keeps everything when no document was ever saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    const a = new FileStore(dir);
    a.appendRecord(rec(0, { incarnation: 'x' }));
    expect(seqsOf((await new FileStore(dir).load()).records)).toEqual(['a0']);
  });

  it('purges one incarnation of a removed job and nothing else', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    const a = new FileStore(dir);
    a.appendRecord(rec(0)); // legacy: belongs to whichever incarnation was there before
    a.appendRecord(rec(1, { incarnation: 'old' }));
    a.appendRecord(rec(0, { job: 'b', incarnation: 'b1' }));
    // A job of the same name submitted again already has a record (the purge runs after a save).
    a.appendRecord(rec(0, { incarnation: 'new' }));
    a.purgeJob('default/a', 'old');
    expect(linesIn(dir)).toBe(2);
    a.appendRecord(rec(1, { incarnation: 'new' }));
    await a.saveDocument(docOf(['a', 'new'], ['b', 'b1']));
    const loaded = await new FileStore(dir).load();
    expect(seqsOf(loaded.records)).toEqual(['b0', 'a0', 'a1']);
    expect(loaded.records.map((r) => r.incarnation)).toEqual(['b1', 'new', 'new']);
  });
});
