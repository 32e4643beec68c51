import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeqSet } from './seq-set';

describe('SeqSet', () => {
  it.each([
    ['in order', [0, 1, 2, 3], 4, 3],
    ['out of order', [3, 0, 2, 1], 4, 3],
    ['with gaps', [0, 5, 9], 3, 9],
  ])('counts %s', (_n, seqs, size, max) => {
    const s = new SeqSet();
    for (const q of seqs) expect(s.add(q)).toBe(true);
    expect(s.size).toBe(size);
    expect(s.max).toBe(max);
  });

  it('reports duplicates', () => {
    const s = new SeqSet();
    s.add(4);
    s.add(5);
    expect(s.add(4)).toBe(false);
    expect(s.add(5)).toBe(false);
    expect(s.size).toBe(2);
  });

  it('behaves like a Set for any sequence', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 200 })), (seqs) => {
        const s = new SeqSet();
        const ref = new Set<number>();
        for (const q of seqs) expect(s.add(q)).toBe(!ref.has(q) && ref.add(q) !== undefined);
        expect(s.size).toBe(ref.size);
        for (const q of ref) expect(s.has(q)).toBe(true);
      }),
    );
  });
});
