import { describe, expect, it } from 'vitest';
import { plural, shapeWords } from './words';

describe('words', () => {
  it.each([
    [plural(0, 'job'), '0 jobs'],
    [plural(1, 'job'), '1 job'],
    [plural(2, 'job'), '2 jobs'],
    [plural(1, 'PS', 'PS'), '1 PS'],
    [shapeWords(1, 1), '1 PS + 1 worker'],
    [shapeWords(2, 4), '2 PS + 4 workers'],
  ])('%s', (got, want) => expect(got).toBe(want));
});
