import { describe, expect, it } from 'vitest';
import { Coalesced } from './coalesced';

describe('Coalesced', () => {
  it('writes once for requests made before the write starts, and again for a request made during it', async () => {
    let state = 0;
    const written: number[] = [];
    let release: () => void = () => {};
    const c = new Coalesced(async () => {
      written.push(state);
      await new Promise<void>((r) => (release = r));
    });
    state = 1;
    const a = c.request();
    state = 2;
    const b = c.request(); // before the write started: shares it, and it reads state 2
    await Promise.resolve();
    await Promise.resolve();
    state = 3;
    const d = c.request(); // the write runs: a new one is queued
    release();
    await Promise.all([a, b]);
    await Promise.resolve();
    await Promise.resolve();
    release();
    await d;
    expect(written).toEqual([2, 3]);
  });
});
