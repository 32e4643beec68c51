import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Outbox } from './outbox';
import { freshSeq, StateStore } from './state-store';

const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-'));
const entry = (seq: number, payload = `{"seq":${seq}}`) => ({ seq, ino: 9, pos: seq * 100, payload });

describe('Outbox', () => {
  it('survives a restart and skips a torn last line', () => {
    const file = path.join(tmp(), 'o.jsonl');
    const a = new Outbox(file);
    a.append([entry(1), entry(2)]);
    a.close();
    fs.appendFileSync(file, '3\t9\t300\t{"seq":');
    expect(new Outbox(file).load()).toEqual([entry(1), entry(2)]);
  });

  it('empties the file once everything is acknowledged, persisting state first', () => {
    const file = path.join(tmp(), 'o.jsonl');
    const o = new Outbox(file);
    const big = 'x'.repeat(4_200_000);
    o.append([entry(1, big)]);
    const calls: string[] = [];
    o.compact([], () => calls.push('state saved') > 0);
    expect(calls).toEqual(['state saved']);
    expect(fs.statSync(file).size).toBe(0);
    o.append([entry(2)]);
    expect(new Outbox(file).load()).toEqual([entry(2)]);
  });

  it('does not shrink the file when the state could not be saved first', () => {
    const file = path.join(tmp(), 'o.jsonl');
    const o = new Outbox(file);
    o.append([entry(1, 'x'.repeat(4_200_000))]);
    o.compact([], () => false);
    expect(new Outbox(file).load().map((e) => e.seq)).toEqual([1]);
  });

  it('rewrites the file with only the pending entries when acknowledged ones pile up', () => {
    const file = path.join(tmp(), 'o.jsonl');
    const o = new Outbox(file);
    const big = 'x'.repeat(2_200_000);
    o.append([entry(1, big), entry(2, big), entry(3)]);
    o.compact([entry(3)], () => true);
    expect(new Outbox(file).load()).toEqual([entry(3)]);
    o.append([entry(4)]);
    expect(new Outbox(file).load().map((e) => e.seq)).toEqual([3, 4]);
  });
});

describe('StateStore', () => {
  it('round-trips and treats a corrupt file as absent', () => {
    const file = path.join(tmp(), 's.json');
    const store = new StateStore(file);
    expect(store.load()).toBeNull();
    const state = { v: 1 as const, ino: 4, pos: 10, nextSeq: 7, ackedSeq: 6 };
    store.save(state);
    expect(store.load()).toEqual(state);
    fs.writeFileSync(file, '{"v":1,');
    expect(store.load()).toBeNull();
  });

  it('saves in place at a fixed size, so a shorter state leaves no stale bytes behind', () => {
    const file = path.join(tmp(), 's.json');
    const store = new StateStore(file);
    store.save({
      v: 1,
      ino: 123456789,
      pos: 987654321,
      nextSeq: 1795989562746278,
      ackedSeq: 1795989562746277,
    });
    const ino = fs.statSync(file).ino;
    const short = { v: 1 as const, ino: null, pos: 0, nextSeq: 1, ackedSeq: -1 };
    store.save(short);
    store.close();
    expect(fs.statSync(file)).toMatchObject({ ino, size: 256 });
    expect(new StateStore(file).load()).toEqual(short);
  });

  it('reads a state file written by the previous format (unpadded JSON)', () => {
    const file = path.join(tmp(), 's.json');
    const state = { v: 1 as const, ino: 4, pos: 10, nextSeq: 7, ackedSeq: 6 };
    fs.writeFileSync(file, JSON.stringify(state));
    const store = new StateStore(file);
    expect(store.load()).toEqual(state);
    store.save({ ...state, pos: 11 });
    expect(store.load()).toEqual({ ...state, pos: 11 });
  });

  it('seeds sequence numbers from the clock so a new pod continues above the old one', () => {
    expect(freshSeq(2_000)).toBeGreaterThan(freshSeq(1_000) + 999);
    expect(Number.isSafeInteger(freshSeq(Date.UTC(2200, 0)))).toBe(true);
  });
});

describe('Outbox on a full disk', () => {
  it('refuses an append (no throw) on ENOSPC and says so, then compacts at every confirmation', () => {
    // /dev/full answers every write with ENOSPC, like a filesystem with no free block.
    const o = new Outbox('/dev/full');
    expect(o.append([entry(1)])).toBe(false);
    expect(o.lastError?.code).toBe('ENOSPC');
    expect(o.underPressure).toBe(true);
    const file = path.join(tmp(), 'o.jsonl');
    const small = new Outbox(file);
    small.append([entry(1), entry(2)]);
    small.underPressure = true; // as after a refused append
    small.compact([], () => true);
    expect(fs.statSync(file).size).toBe(0);
  });
});
