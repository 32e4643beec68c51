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

describe('SeqSet ranges', () => {
  it('reports the run containing a seq, merging runs as gaps fill', () => {
    const s = new SeqSet();
    for (const q of [1, 2, 3, 7, 8]) s.add(q);
    expect(s.rangeOf(2)).toEqual({ from: 1, through: 3 });
    expect(s.rangeOf(5)).toBeNull();
    expect(s.runs).toBe(2);
    for (const q of [4, 5, 6]) s.add(q);
    expect(s.rangeOf(8)).toEqual({ from: 1, through: 8 });
    expect(s.runs).toBe(1);
  });

  it('keeps lookups logarithmic for scattered seqs: the work per message does not grow with the set', () => {
    // Counted in comparisons, not timed: the tree's depth bounds every lookup (2·log2(n+1) for a
    // red-black tree), whereas the former linear scan visited every range.
    const s = new SeqSet();
    for (let i = 0; i < 50_000; i++) s.add(i * 2);
    expect(s.runs).toBe(50_000);
    const depth = (s as unknown as { ranges: { getHeight(): number } }).ranges.getHeight();
    expect(depth).toBeLessThanOrEqual(2 * Math.log2(50_001));
    expect(s.has(99_998)).toBe(true);
    expect(s.has(99_999)).toBe(false);
  });
});
