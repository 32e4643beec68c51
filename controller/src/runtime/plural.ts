/**
 * "1 worker", "2 workers": a count with its noun in the right number.
 *
 * @example plural(1, 'job') // "1 job"
 * @example plural(3, 'PS', 'PS') // "3 PS"
 */
export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : pluralForm}`;
}
