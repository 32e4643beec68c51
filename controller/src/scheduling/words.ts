/** Words for counts and shapes in reasons and messages. Pure. */

/**
 * A count with its noun in the right number.
 * @example plural(1, 'job') // "1 job"
 * @example plural(3, 'PS', 'PS') // "3 PS"
 */
export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : pluralForm}`;
}

/**
 * A shape in words.
 * @example shapeWords(1, 1) // "1 PS + 1 worker"
 */
export const shapeWords = (ps: number, workers: number): string =>
  `${plural(ps, 'PS', 'PS')} + ${plural(workers, 'worker')}`;
