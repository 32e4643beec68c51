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
    const big = 'x'.repeat(70_000);
    o.append([entry(1, big)]);
    const calls: string[] = [];
    o.compact([], () => calls.push('state saved'));
    expect(calls).toEqual(['state saved']);
    expect(fs.statSync(file).size).toBe(0);
    o.append([entry(2)]);
    expect(new Outbox(file).load()).toEqual([entry(2)]);
  });

  it('rewrites the file with only the pending entries when acknowledged ones pile up', () => {
    const file = path.join(tmp(), 'o.jsonl');
    const o = new Outbox(file);
    const big = 'x'.repeat(600_000);
    o.append([entry(1, big), entry(2, big), entry(3)]);
    o.compact([entry(3)], () => undefined);
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

  it('seeds sequence numbers from the clock so a new pod continues above the old one', () => {
    expect(freshSeq(2_000)).toBeGreaterThan(freshSeq(1_000) + 999);
    expect(Number.isSafeInteger(freshSeq(Date.UTC(2200, 0)))).toBe(true);
  });
});
