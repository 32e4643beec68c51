import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BinaryHeap } from '../core/heap';
import { GainHeap } from '../core/gain-heap';
import { evenBundles, evenGroups } from './even-bundles';
import { SortedChunks } from './sorted-chunks';

describe('evenBundles / evenGroups', () => {
  it.each([
    { p: 2, w: 4, k: 2, expected: ['1+2', '1+2'] },
    { p: 3, w: 3, k: 2, expected: ['2+1', '1+2'] },
    { p: 1, w: 5, k: 3, expected: ['1+1', '0+2', '0+2'] },
    { p: 4, w: 0, k: 4, expected: ['1+0', '1+0', '1+0', '1+0'] },
  ])('$p PS + $w workers on $k servers', ({ p, w, k, expected }) => {
    expect(evenBundles(p, w, k).map((b) => `${b.ps}+${b.workers}`)).toEqual(expected);
  });

  it('groups are the bundles counted by size, with nothing empty', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 60 }),
        (p, w, k) => {
          fc.pre(k <= p + w);
          const count = new Map<string, number>();
          for (const b of evenBundles(p, w, k))
            count.set(`${b.ps}+${b.workers}`, (count.get(`${b.ps}+${b.workers}`) ?? 0) + 1);
          const groups = new Map(evenGroups(p, w, k).map((g) => [`${g.ps}+${g.workers}`, g.count]));
          expect(groups).toEqual(count);
          expect(groups.has('0+0')).toBe(false);
        },
      ),
    );
  });
});

describe('SortedChunks', () => {
  it('stays sorted under random inserts and removes, like a plain sorted array', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 200 })), { maxLength: 400 }),
        (ops) => {
          const cmp = (a: number, b: number) => a - b;
          const list = new SortedChunks([], cmp, 4);
          const model: number[] = [];
          for (const [insert, x] of ops) {
            if (insert && !model.includes(x)) {
              list.insert(x);
              model.push(x);
            } else if (!insert) {
              expect(list.remove(x)).toBe(model.includes(x));
              if (model.includes(x)) model.splice(model.indexOf(x), 1);
            }
          }
          expect(list.toArray()).toEqual([...model].sort(cmp));
          expect(list.size).toBe(model.length);
        },
      ),
    );
  });
});

describe('heaps', () => {
  it('GainHeap pops by gain descending, ties by rank, like a sort', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 50 }), (gains) => {
        const ranks = gains.map((_, i) => gains.length - i);
        const heap = new GainHeap(ranks);
        gains.forEach((g, slot) => {
          heap.gain[slot] = g;
          heap.push(slot);
        });
        const out: number[] = [];
        for (let s = heap.pop(); s >= 0; s = heap.pop()) out.push(s);
        const expected = gains
          .map((_, i) => i)
          .sort((a, b) => (gains[b] ?? 0) - (gains[a] ?? 0) || (ranks[a] ?? 0) - (ranks[b] ?? 0));
        expect(out).toEqual(expected);
      }),
    );
  });

  it('BinaryHeap pops in comparator order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), (xs) => {
        const heap = new BinaryHeap<number>((a, b) => a < b);
        for (const x of xs) heap.push(x);
        const out: number[] = [];
        for (let x = heap.pop(); x !== undefined; x = heap.pop()) out.push(x);
        expect(out).toEqual([...xs].sort((a, b) => a - b));
      }),
    );
  });
});
