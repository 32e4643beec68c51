/**
 * A small seeded pseudo-random generator (mulberry32) so that every simulation is reproducible:
 * the same seed gives the same workload, the same noise and therefore the same result.
 */

/** A deterministic random source. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number;
  /** Integer uniform in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number;
  /** Standard normal draw (Box–Muller). */
  normal(): number;
  /** Exponential draw with the given mean. */
  exponential(mean: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A new independent stream derived from this one and a label (stable across code changes elsewhere). */
  fork(label: string): Rng;
}

function hashString(s: string, seed: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x85ebca6b);
    h = (h ^ (h >>> 13)) >>> 0;
  }
  return h >>> 0;
}

/** Creates a generator from an integer seed. */
export function createRng(seed: number): Rng {
  let state = (Math.floor(seed) ^ 0x6d2b79f5) >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    uniform: (lo, hi) => lo + (hi - lo) * next(),
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    normal: () => {
      const u = Math.max(next(), 1e-12);
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
    },
    exponential: (mean) => -mean * Math.log(Math.max(1 - next(), 1e-12)),
    pick: <T>(items: readonly T[]): T => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick() from an empty list');
      return item;
    },
    fork: (label) => createRng(hashString(label, state)),
  };
  return rng;
}

/**
 * A standard normal value that depends only on (seed, key, index): observation noise that is identical
 * whichever policy runs, so policies are compared on the same noisy sidecar data.
 */
export function hashedNormal(seed: number, key: string, index: number): number {
  const h1 = hashString(`${key}#${index}`, seed);
  const h2 = hashString(`${index}#${key}`, seed ^ 0x5bd1e995);
  const u1 = Math.max((h1 + 0.5) / 4294967296, 1e-12);
  const u2 = (h2 + 0.5) / 4294967296;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}
