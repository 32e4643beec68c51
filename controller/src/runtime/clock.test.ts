import { describe, expect, it } from 'vitest';
import { roundSec, scaledClock } from './clock';

/** At most three decimals when printed as JSON. */
const clean = (x: number): boolean => /^-?\d+(\.\d{1,3})?$/.test(JSON.stringify(x));

describe('scaledClock', () => {
  it('gives job seconds to the millisecond and whole wall ms, without float noise', () => {
    let wall = 1_700_000_000_000;
    const clock = scaledClock({ scale: 3, originMs: wall, source: () => wall });
    for (const step of [1, 7, 33, 101, 333, 1_000, 12_345]) {
      wall += step;
      expect(clean(clock.now())).toBe(true);
      expect(Number.isInteger(clock.wallMsAfter(0.1 + 0.2))).toBe(true);
    }
    expect(JSON.stringify(0.1 + 0.2)).toBe('0.30000000000000004'); // what the rounding removes
    expect(roundSec(0.1 + 0.2)).toBe(0.3);
    expect(roundSec(731.8000000000001)).toBe(731.8);
  });
});
