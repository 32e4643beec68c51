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

  it('reports the same runs, sizes and maximum as a reference for any order (in order, gaps, refills)', () => {
    // Runs of consecutive seqs in any order: the newest range's fast path and the tree must agree.
    const chunk = fc.tuple(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1, max: 6 }));
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 40 }), (chunks) => {
        const s = new SeqSet();
        const ref = new Set<number>();
        for (const [from, len] of chunks)
          for (let q = from; q < from + len; q++)
            expect(s.add(q)).toBe(!ref.has(q) && ref.add(q) !== undefined);
        const sorted = [...ref].sort((a, b) => a - b);
        const runs: [number, number][] = [];
        for (const q of sorted) {
          const last = runs[runs.length - 1];
          if (last && last[1] === q - 1) last[1] = q;
          else runs.push([q, q]);
        }
        expect({ size: s.size, runs: s.runs, max: s.max }).toEqual({
          size: ref.size,
          runs: runs.length,
          max: sorted[sorted.length - 1] ?? -1,
        });
        for (const [from, through] of runs) {
          expect(s.rangeOf(from)).toEqual({ from, through });
          expect(s.rangeOf(through)).toEqual({ from, through });
          expect(s.has(from - 1)).toBe(false);
          expect(s.has(through + 1)).toBe(false);
        }
      }),
    );
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
    expect(s.max).toBe(99_998);
    expect(depth).toBeLessThanOrEqual(2 * Math.log2(50_001));
    expect(s.has(99_998)).toBe(true);
    expect(s.has(99_999)).toBe(false);
  });
});
