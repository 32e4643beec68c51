import { describe, expect, it } from 'vitest';
import { mixSeed, sampleIndices, seededRandom } from './random';

describe('seeded randomness', () => {
  it('repeats for a seed and differs between seeds', () => {
    const a = seededRandom(5);
    const b = seededRandom(5);
    const c = seededRandom(6);
    const xs = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(xs);
    expect(c()).not.toBe(xs[0]);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
  });

  it.each([
    { n: 10, k: 10 },
    { n: 210, k: 5 },
    { n: 3, k: 0 },
  ])('draws $k distinct indices from $n', ({ n, k }) => {
    const drawn = sampleIndices(seededRandom(1), n, k);
    expect(drawn).toHaveLength(k);
    expect(new Set(drawn).size).toBe(k);
    for (const i of drawn) expect(i >= 0 && i < n).toBe(true);
  });

  it('refuses to draw more than there is', () => {
    expect(() => sampleIndices(seededRandom(1), 3, 4)).toThrow(/cannot draw 4/);
  });
});
