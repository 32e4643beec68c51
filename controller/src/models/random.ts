/**
 * Seeded pseudo-random numbers for evaluations, synthetic data and tie-breaking.
 * Pure and reproducible: the same seed always gives the same sequence (no clock, no global state).
 */

/** A source of uniform numbers in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: tiny, fast, good enough statistically for sampling and tests (not for cryptography).
 * @example const random = seededRandom(42); random(); // 0.6011…
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes several integers into one 32-bit seed, so (seed, index) pairs give unrelated streams. */
export function mixSeed(...parts: readonly number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x01000193) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
  }
  return h >>> 0;
}

/** A uniform integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}

/** k distinct indices drawn uniformly from [0, n) (partial Fisher–Yates), in draw order. */
export function sampleIndices(random: Random, n: number, k: number): number[] {
  if (!Number.isInteger(k) || k < 0 || k > n) throw new Error(`cannot draw ${k} distinct indices from ${n}`);
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + randomInt(random, n - i);
    const tmp = pool[i] as number;
    pool[i] = pool[j] as number;
    pool[j] = tmp;
  }
  return pool.slice(0, k);
}

/** A standard normal number (Box–Muller). */
export function gaussian(random: Random): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
