/**
 * Which (ps, workers) shapes to pre-run before a job starts, given a budget of n runs.
 * The paper pre-ran 5 random shapes. We choose a D-optimal design for the law we fit: greedily add
 * the shape that most increases det(XᵀX) of the relative feature rows (log-det, tiny ridge), so the
 * few runs pin down every term of the law instead of clustering where shapes are plentiful.
 * Rows are normalised (columns to unit maximum, then rows to unit length) because the fit weights
 * each row by its own step time, unknown before the runs. The first run is the smallest shape
 * (cheapest, and the most informative about the per-PS and compute terms). Pure and deterministic:
 * the seed only breaks exact ties.
 */
import { designFeatureSet, featureRow } from './features';
import { mixSeed, randomInt, seededRandom } from '../random';
import type { TrainingMode } from './types';

export interface Shape {
  readonly ps: number;
  readonly workers: number;
}

export interface ChooseShapesOptions {
  /** How many shapes to return (≥ 1). */
  readonly budget: number;
  readonly maxPs: number;
  readonly maxWorkers: number;
  readonly mode: TrainingMode;
  /** Allowed shapes; default every (ps, workers) within the maxima. */
  readonly candidates?: readonly Shape[] | undefined;
  /** Breaks exact ties (default 1). */
  readonly seed?: number | undefined;
}

const RIDGE = 1e-6;
const TIE = 1e-9;

function logDet(m: Float64Array, d: number): number {
  const a = Float64Array.from(m);
  let sum = 0;
  for (let c = 0; c < d; c++) {
    const pivot = a[c * d + c] as number;
    if (pivot <= 0) return -Infinity;
    sum += Math.log(pivot);
    for (let r = c + 1; r < d; r++) {
      const f = (a[r * d + c] as number) / pivot;
      for (let k = c; k < d; k++) a[r * d + k] = (a[r * d + k] as number) - f * (a[c * d + k] as number);
    }
  }
  return sum;
}

function candidateShapes(opts: ChooseShapesOptions): Shape[] {
  const within = (s: Shape): boolean =>
    s.ps >= 1 && s.workers >= 1 && s.ps <= opts.maxPs && s.workers <= opts.maxWorkers;
  if (opts.candidates) {
    const seen = new Set<string>();
    return opts.candidates.filter(
      (s) => within(s) && !seen.has(`${s.ps},${s.workers}`) && seen.add(`${s.ps},${s.workers}`),
    );
  }
  const all: Shape[] = [];
  for (let ps = 1; ps <= opts.maxPs; ps++)
    for (let workers = 1; workers <= opts.maxWorkers; workers++) all.push({ ps, workers });
  return all;
}

function designRows(mode: TrainingMode, shapes: readonly Shape[]): Float64Array[] {
  const set = designFeatureSet(mode);
  const raw = shapes.map((s) => featureRow(set, s.ps, s.workers));
  const maxima = set.map((_, j) => Math.max(...raw.map((r) => Math.abs(r[j] as number))) || 1);
  return raw.map((r) => {
    const scaled = r.map((v, j) => v / (maxima[j] as number));
    const norm = Math.hypot(...scaled) || 1;
    return scaled.map((v) => v / norm);
  });
}

/**
 * Chooses `budget` distinct shapes to measure first (all candidates when the budget covers them).
 * @example chooseSampleShapes({ budget: 5, maxPs: 10, maxWorkers: 10, mode: 'sync' })
 */
export function chooseSampleShapes(opts: ChooseShapesOptions): Shape[] {
  if (!Number.isInteger(opts.budget) || opts.budget < 1)
    throw new RangeError(`chooseSampleShapes: budget must be a positive integer, got ${opts.budget}`);
  const shapes = candidateShapes(opts);
  if (shapes.length === 0)
    throw new RangeError('chooseSampleShapes: no candidate shape within maxPs/maxWorkers');
  if (opts.budget >= shapes.length) return shapes;
  const rows = designRows(opts.mode, shapes);
  const d = (rows[0] as Float64Array).length;
  const random = seededRandom(mixSeed(opts.seed ?? 1, 0x5eed));
  const gram = new Float64Array(d * d);
  for (let i = 0; i < d; i++) gram[i * d + i] = RIDGE;
  const chosen: number[] = [];
  const smallest = shapes.reduce((best, s, i) => {
    const b = shapes[best] as Shape;
    return s.ps + s.workers < b.ps + b.workers || (s.ps + s.workers === b.ps + b.workers && s.ps < b.ps)
      ? i
      : best;
  }, 0);
  const add = (i: number): void => {
    const r = rows[i] as Float64Array;
    for (let a = 0; a < d; a++)
      for (let b = 0; b < d; b++)
        gram[a * d + b] = (gram[a * d + b] as number) + (r[a] as number) * (r[b] as number);
    chosen.push(i);
  };
  add(smallest);
  while (chosen.length < opts.budget) {
    const scores = rows.map((r, i) => {
      if (chosen.includes(i)) return -Infinity;
      const g = Float64Array.from(gram);
      for (let a = 0; a < d; a++)
        for (let b = 0; b < d; b++)
          g[a * d + b] = (g[a * d + b] as number) + (r[a] as number) * (r[b] as number);
      return logDet(g, d);
    });
    const best = Math.max(...scores);
    const ties = scores.flatMap((s, i) => (s >= best - TIE * Math.max(1, Math.abs(best)) ? [i] : []));
    add(ties[randomInt(random, ties.length)] as number);
  }
  return chosen.map((i) => shapes[i] as Shape);
}
