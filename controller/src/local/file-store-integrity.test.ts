/**
 * The local store against damage (issue 28, ADR 0032): a wrong-shaped `state.json` is an error that
 * names the file and a way out; a torn tail is cut and counted; garbage in the middle is quarantined
 * with its line number and counted; a log emptied, removed or replaced under a live store is noticed
 * and said, and the removed or replaced one is restored without losing an acknowledged record.
 */
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeDocument, StoredRecord } from '../runtime/backend';
import { newJobRecord } from '../runtime/job-record';
import { testJobSpec } from '../runtime/testing';
import { FileStore, type StoreIntegrityEvent } from './file-store';
import { StateFileError } from './file-store-schema';

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
const doc: RuntimeDocument = { v: 1, originMs: 0, decisions: 0, jobs: [newJobRecord(testJobSpec('a'), 0)] };

function storeIn(dir: string): { store: FileStore; events: StoreIntegrityEvent[] } {
  const events: StoreIntegrityEvent[] = [];
  return { store: new FileStore(dir, { onIntegrity: (e) => events.push(e) }), events };
}

async function seeded(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'store-integrity-'));
  const { store } = storeIn(dir);
  await store.load();
  for (let i = 0; i < n; i++) store.appendRecord(rec(i));
  await store.saveDocument(doc);
  await store.close();
  return dir;
}

describe('FileStore integrity', () => {
  it.each([
    ['not JSON', '{"v":1,', /not JSON/],
    ['jobs is not a list', '{"v":1,"originMs":0,"decisions":0,"jobs":{}}', /jobs: /],
    [
      'a job without a phase',
      JSON.stringify({ ...doc, jobs: [{ ...doc.jobs[0], phase: 'dancing' }] }),
      /jobs\.0\.phase/,
    ],
    [
      'a job spec with a bad name',
      JSON.stringify({ ...doc, jobs: [{ ...doc.jobs[0], spec: { name: 'Not A Name' } }] }),
      /jobs\.0\.spec/,
    ],
  ])(
    'refuses a state.json that is %s with an error naming the file and a recovery command',
    async (_n, text, field) => {
      const dir = mkdtempSync(join(tmpdir(), 'store-integrity-'));
      writeFileSync(join(dir, 'state.json'), text);
      const store = new FileStore(dir, { recovery: 'Run `optimus local --fresh --state-dir x`.' });
      const err = await store.load().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StateFileError);
      expect((err as Error).message).toContain(join(dir, 'state.json'));
      expect((err as Error).message).toMatch(field);
      expect((err as Error).message).toContain('optimus local --fresh --state-dir x');
    },
  );

  it('cuts a torn tail at start and counts it; the next append starts on a line of its own', async () => {
    const dir = await seeded(3);
    appendFileSync(join(dir, 'records.jsonl'), '{"task":{"namespace":"def');
    const { store, events } = storeIn(dir);
    expect((await store.load()).records).toHaveLength(3);
    expect(events).toEqual([{ kind: 'torn-tail', file: join(dir, 'records.jsonl'), bytes: 25 }]);
    store.appendRecord(rec(3));
    await store.close();
    expect((await new FileStore(dir).load()).records.map((r) => r.record.seq)).toEqual([0, 1, 2, 3]);
  });

  it('quarantines garbage in the middle with its line number, keeps every record around it, and counts it', async () => {
    const dir = await seeded(2);
    const log = join(dir, 'records.jsonl');
    const lines = readFileSync(log, 'utf8').split('\n');
    // Line 2 garbage, line 4 valid JSON but not a record (a record with an impossible seq).
    const foreign = JSON.stringify({ ...rec(9), record: { ...rec(9).record, seq: -1 } });
    writeFileSync(log, [lines[0], 'garbage %%%', lines[1], foreign, ''].join('\n'));
    const { store, events } = storeIn(dir);
    expect((await store.load()).records.map((r) => r.record.seq)).toEqual([0, 1]);
    expect(store.integrity.quarantinedLines).toBe(2);
    expect(events.find((e) => e.kind === 'quarantined')).toMatchObject({ lines: [2, 4] });
    const q = readFileSync(join(dir, 'records.quarantined.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; text: string; reason: string });
    expect(q.map((x) => [x.line, x.text])).toEqual([
      [2, 'garbage %%%'],
      [4, foreign],
    ]);
    expect(q[1]?.reason).toMatch(/record\.seq/);
    // The log itself holds records only now: a second start finds nothing to quarantine.
    const again = storeIn(dir);
    await again.store.load();
    expect(again.events).toEqual([]);
  });

  it('says how many acknowledged records were lost when records.jsonl is emptied under a live store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-integrity-'));
    const { store, events } = storeIn(dir);
    await store.load();
    for (let i = 0; i < 5; i++) store.appendRecord(rec(i));
    await store.durable();
    truncateSync(join(dir, 'records.jsonl'), 0); // `: > records.jsonl`
    await store.durable(); // the watermark tick notices
    expect(events).toEqual([{ kind: 'truncated', file: join(dir, 'records.jsonl'), lostRecords: 5 }]);
    expect(store.integrity.lostUnderUs).toBe(5);
    // Appends go on at the new end, whole lines.
    store.appendRecord(rec(5));
    await store.close();
    expect((await new FileStore(dir).load()).records.map((r) => r.record.seq)).toEqual([5]);
  });

  it('notices an emptied log at the next append too, before writing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-integrity-'));
    const { store, events } = storeIn(dir);
    await store.load();
    for (let i = 0; i < 3; i++) store.appendRecord(rec(i));
    truncateSync(join(dir, 'records.jsonl'), 0);
    store.appendRecord(rec(3));
    expect(events).toEqual([{ kind: 'truncated', file: join(dir, 'records.jsonl'), lostRecords: 3 }]);
    await store.close();
  });

  it.each([
    ['removed', (log: string) => rmSync(log)],
    [
      'replaced by another file',
      (log: string) => {
        writeFileSync(`${log}.new`, 'something else\n');
        renameSync(`${log}.new`, log);
      },
    ],
  ])('restores a log %s under a live store from its open descriptor: nothing lost', async (how, act) => {
    const dir = mkdtempSync(join(tmpdir(), 'store-integrity-'));
    const log = join(dir, 'records.jsonl');
    const { store, events } = storeIn(dir);
    await store.load();
    for (let i = 0; i < 4; i++) store.appendRecord(rec(i));
    act(log);
    await store.durable();
    expect(events[0]?.kind).toBe(how === 'removed' ? 'removed' : 'replaced');
    const keptAs = (events[0] as { keptAs: string | null }).keptAs;
    if (how !== 'removed') expect(readFileSync(keptAs!, 'utf8')).toBe('something else\n');
    store.appendRecord(rec(4));
    await store.close();
    expect((await new FileStore(dir).load()).records.map((r) => r.record.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('notices at start that the log lost records while no controller ran (the document counted them)', async () => {
    const dir = await seeded(4);
    writeFileSync(join(dir, 'records.jsonl'), '');
    const { store, events } = storeIn(dir);
    await store.load();
    expect(events).toEqual([{ kind: 'missing-at-start', file: join(dir, 'records.jsonl'), missing: 4 }]);
    expect(store.integrity.missingAtStart).toBe(4);
  });

  it('writes state.json through a temporary file it then removes (fsync, rename)', async () => {
    const dir = await seeded(1);
    expect(existsSync(join(dir, 'state.json'))).toBe(true);
    expect(existsSync(join(dir, 'state.json.tmp'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))).toMatchObject({ storedRecords: 1 });
  });
});
