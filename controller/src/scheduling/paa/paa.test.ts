import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  assignParameters,
  defaultMxnetAssignment,
  resnet50Blocks,
  summarizeAssignment,
  type Assignment,
  type ParameterBlock,
} from './index';

const blocks = (...sizes: number[]): ParameterBlock[] => sizes.map((size, i) => ({ name: `b${i}`, size }));

/** Every block is covered exactly once by contiguous pieces. */
function expectCovers(a: Assignment, list: readonly ParameterBlock[]): void {
  for (const b of list) {
    const pieces = a.pieces.filter((p) => p.block === b.name).sort((x, y) => x.offset - y.offset);
    let offset = 0;
    for (const p of pieces) {
      expect(p.offset).toBe(offset);
      expect(p.server).toBeGreaterThanOrEqual(0);
      expect(p.server).toBeLessThan(a.ps);
      offset += p.size;
    }
    expect(offset).toBe(b.size);
  }
}

describe('ResNet-50 parameter blocks', () => {
  it('has the 157 blocks and 25,549,486 parameters of MXNet ResNet-50 v2', () => {
    const b = resnet50Blocks();
    expect(b).toHaveLength(157);
    expect(b.reduce((s, x) => s + x.size, 0)).toBe(25_549_486);
    expect(b.find((x) => x.name === 'fc1_weight')?.size).toBe(2_048_000);
    expect(b.find((x) => x.name === 'stage4_unit1_conv2_weight')?.size).toBe(512 * 512 * 9);
  });

  it('the shipped JSON file is exactly the derivation', () => {
    const file: unknown = JSON.parse(
      readFileSync(new URL('./resnet50-blocks.json', import.meta.url), 'utf8'),
    );
    expect(file).toEqual(resnet50Blocks());
  });
});

describe('PAA (paper §5.3)', () => {
  const cases: { name: string; list: ParameterBlock[]; ps: number; sizes: number[]; requests: number[] }[] = [
    {
      name: 'equal blocks spread evenly',
      list: blocks(100, 100, 100, 100),
      ps: 2,
      sizes: [200, 200],
      requests: [2, 2],
    },
    {
      name: 'best fit fills each PS to the average exactly',
      list: blocks(60, 50, 40, 30, 20),
      ps: 2,
      sizes: [100, 100],
      requests: [2, 3],
    },
    {
      name: 'tiny blocks (< 1% of avg) go to the PS with the fewest requests',
      list: blocks(1000, 1000, 1, 1, 1, 1),
      ps: 2,
      sizes: [1002, 1002],
      requests: [3, 3],
    },
    {
      name: 'a block larger than the average is sliced into average-sized pieces',
      list: blocks(900, 60, 40),
      ps: 4,
      sizes: [250, 250, 250, 250],
      requests: [1, 1, 1, 3],
    },
  ];
  it.each(cases)('$name', ({ list, ps, sizes, requests }) => {
    const a = assignParameters(list, ps);
    expectCovers(a, list);
    const s = summarizeAssignment(a);
    expect(s.sizes).toEqual(sizes);
    expect(s.requests).toEqual(requests);
  });

  it.each([2, 4, 8, 16])(
    'balances ResNet-50 on %i PS better than MXNet default, in size and requests',
    (ps) => {
      const list = resnet50Blocks();
      const paa = summarizeAssignment(assignParameters(list, ps));
      const mx = summarizeAssignment(defaultMxnetAssignment(list, ps, 1));
      expectCovers(assignParameters(list, ps), list);
      expect(paa.maxSize - paa.minSize).toBeLessThan((mx.maxSize - mx.minSize) / (ps >= 8 ? 10 : 1));
      expect(paa.maxRequests - paa.minRequests).toBeLessThanOrEqual(1);
      expect(mx.maxRequests - mx.minRequests).toBeGreaterThan(1);
    },
  );

  it.each([
    { name: 'ps 0', run: () => assignParameters(blocks(1), 0), error: 'ps must be an integer ≥ 1, got 0' },
    { name: 'no blocks', run: () => assignParameters([], 2), error: 'blocks must not be empty' },
    {
      name: 'size 0',
      run: () => assignParameters(blocks(5, 0), 2),
      error: 'blocks[1].size (b1) must be an integer ≥ 1, got 0',
    },
    {
      name: 'duplicate names',
      run: () =>
        defaultMxnetAssignment(
          [
            { name: 'w', size: 1 },
            { name: 'w', size: 2 },
          ],
          2,
          1,
        ),
      error: 'blocks[1].name "w" appears twice',
    },
  ])('rejects bad input: $name', ({ run, error }) => {
    expect(run).toThrow(error);
  });
});

describe('MXNet default assignment', () => {
  it('slices blocks of ≥ 10^6 parameters evenly over every PS and keeps small ones whole', () => {
    const list = [
      { name: 'big', size: 1_000_003 },
      { name: 'small', size: 999_999 },
    ];
    const a = defaultMxnetAssignment(list, 4, 7);
    expectCovers(a, list);
    expect(a.pieces.filter((p) => p.block === 'big').map((p) => p.size)).toEqual([
      250_001, 250_001, 250_001, 250_000,
    ]);
    expect(a.pieces.filter((p) => p.block === 'small')).toHaveLength(1);
  });

  it('is deterministic for a seed and differs across seeds', () => {
    const list = resnet50Blocks();
    expect(defaultMxnetAssignment(list, 8, 3)).toEqual(defaultMxnetAssignment(list, 8, 3));
    expect(defaultMxnetAssignment(list, 8, 3)).not.toEqual(defaultMxnetAssignment(list, 8, 4));
  });
});
