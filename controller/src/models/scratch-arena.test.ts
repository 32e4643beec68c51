import { describe, expect, it } from 'vitest';
import { ScratchArena } from './scratch-arena';

describe('ScratchArena', () => {
  it('hands out disjoint zero-filled views, and reuses the memory after reset', () => {
    const arena = new ScratchArena(16);
    const a = arena.take(10);
    a.fill(7);
    const b = arena.take(6);
    expect(Array.from(b)).toEqual([0, 0, 0, 0, 0, 0]);
    b.fill(3);
    expect(a[9]).toBe(7);
    arena.reset();
    const c = arena.take(10);
    expect(Array.from(c)).toEqual(new Array(10).fill(0));
  });

  it('grows when a request does not fit, leaving earlier views intact', () => {
    const arena = new ScratchArena(8);
    const a = arena.take(8);
    a.fill(1);
    const big = arena.take(20);
    expect(big.length).toBe(20);
    expect(Array.from(a)).toEqual(new Array(8).fill(1));
  });
});
