/**
 * One design matrix for ALL candidate laws of a fit. The candidates share most of their columns
 * (they are subsets of the same six features), and a column's relative value x/t and its scale
 * (RMS over the rows) do not depend on which other columns sit beside it. So the features, the
 * scaling and the Gram matrix are computed once over the union of the columns; every candidate
 * gathers its sub-matrix. Same operations in the same order as a per-candidate build, hence the
 * same numbers (bit for bit when the candidates list their features in union order, as
 * `candidateFeatureSets` does) — at a quarter of the cost.
 */
import { codesOf, FEATURE_NAMES, type FeatureSet } from './features';
import type { NormalEquations } from './nnls';
import { freshArrays, type Allocate } from '../scratch-arena';

/** A sample reduced to what the linear fit needs. */
export interface FitRow {
  readonly ps: number;
  readonly workers: number;
  /** The linear target: step time (sync) or one worker's step time (async). */
  readonly stepTime: number;
  /** √weight of the row (0 drops it). */
  readonly scale: number;
}

export interface SharedDesign {
  /** Feature codes of the union columns, ascending (FEATURE_NAMES order). */
  readonly codes: Int8Array;
  readonly rows: number;
  /** Relative, column-scaled features x/(t·s), rows × codes.length. */
  readonly rel: Float64Array;
  readonly scales: Float64Array;
  /** Weighted normal equations over the union columns (target 1 per row). */
  readonly full: NormalEquations;
}

/** Unions already computed, keyed by the list of sets (the candidate lists are constants). */
const unions = new WeakMap<readonly FeatureSet[], Int8Array>();

/** Union of the sets' feature codes, ascending (cached per list: this runs once per fit). */
function unionCodes(sets: readonly FeatureSet[]): Int8Array {
  let codes = unions.get(sets);
  if (codes === undefined) {
    const seen = new Set<number>();
    for (const set of sets) for (const c of codesOf(set)) seen.add(c);
    codes = Int8Array.from([...seen].sort((a, b) => a - b));
    unions.set(sets, codes);
  }
  return codes;
}

/** Every feature of a shape, indexed by code (the same expressions as `writeFeatures`). */
function featuresOfShape(ps: number, workers: number, batch: number, out: Float64Array): void {
  out[0] = batch / workers;
  out[1] = 1;
  out[2] = workers / ps;
  out[3] = workers;
  out[4] = ps;
  out[5] = 1 / ps;
}

/** Builds the scaled relative design over the union of `sets` and its normal equations for `rows`. */
export function sharedDesign(
  sets: readonly FeatureSet[],
  rows: readonly FitRow[],
  batch: number,
  allocate: Allocate = freshArrays,
): SharedDesign {
  const codes = unionCodes(sets);
  const d = codes.length;
  const n = rows.length;
  const rel = allocate(n * d);
  const scales = new Float64Array(d);
  const all = new Float64Array(FEATURE_NAMES.length);
  for (let i = 0; i < n; i++) {
    const r = rows[i] as FitRow;
    // Every feature of the row at once (a few divisions), then the union's columns picked by code.
    featuresOfShape(r.ps, r.workers, batch, all);
    for (let j = 0; j < d; j++) {
      const v = (all[codes[j] as number] as number) / r.stepTime;
      rel[i * d + j] = v;
      scales[j] = (scales[j] as number) + v * v;
    }
  }
  for (let j = 0; j < d; j++) scales[j] = Math.sqrt((scales[j] as number) / Math.max(n, 1)) || 1;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) rel[i * d + j] = (rel[i * d + j] as number) / (scales[j] as number);
  const full: NormalEquations = { gram: allocate(d * d), rhs: new Float64Array(d), dim: d };
  const design = { codes, rows: n, rel, scales, full };
  reweightDesign(design, rows);
  return design;
}

/** Recomputes the normal equations for the rows' current weights (e.g. after dropping an outlier). */
export function reweightDesign(design: SharedDesign, rows: readonly FitRow[]): void {
  const { gram, rhs, dim: d } = design.full;
  const rel = design.rel;
  gram.fill(0);
  rhs.fill(0);
  // The upper triangle row by row (the same sums, in the same order, as `accumulate`), mirrored once at
  // the end rather than on every row.
  for (let i = 0; i < rows.length; i++) {
    const s = (rows[i] as FitRow).scale;
    const weight = s * s;
    const o = i * d;
    for (let a = 0; a < d; a++) {
      const wa = weight * (rel[o + a] as number);
      rhs[a] = (rhs[a] as number) + wa;
      for (let b = a; b < d; b++) gram[a * d + b] = (gram[a * d + b] as number) + wa * (rel[o + b] as number);
    }
  }
  for (let a = 0; a < d; a++) for (let b = a + 1; b < d; b++) gram[b * d + a] = gram[a * d + b] as number;
}

/** Adds (weight > 0) or removes (weight < 0) row i's equation: target 1 after dividing by its step time. */
export function accumulate(eq: NormalEquations, rel: Float64Array, weight: number, i: number): void {
  const d = eq.dim;
  const o = i * d;
  const { gram, rhs } = eq;
  for (let a = 0; a < d; a++) {
    const wa = weight * (rel[o + a] as number);
    rhs[a] = (rhs[a] as number) + wa;
    for (let b = a; b < d; b++) {
      const v = (gram[a * d + b] as number) + wa * (rel[o + b] as number);
      gram[a * d + b] = v;
      gram[b * d + a] = v;
    }
  }
}

/** A candidate's view of the shared design: its columns' indices there, and its own normal equations. */
export interface CandidateDesign {
  readonly shared: SharedDesign;
  /** Column of the shared design holding each of the candidate's features. */
  readonly cols: Int32Array;
  readonly scales: Float64Array;
  readonly full: NormalEquations;
}

/** Gathers the columns of `set` (which must be within the union) from the shared design. */
export function gatherDesign(
  shared: SharedDesign,
  set: FeatureSet,
  allocate: Allocate = freshArrays,
): CandidateDesign {
  const codes = codesOf(set);
  const d = codes.length;
  const D = shared.codes.length;
  const cols = new Int32Array(d);
  for (let j = 0; j < d; j++) {
    cols[j] = shared.codes.indexOf(codes[j] as number);
    if ((cols[j] as number) < 0)
      throw new Error(`gatherDesign: feature ${set[j]} is not in the shared design`);
  }
  const scales = new Float64Array(d);
  const gram = allocate(d * d);
  const rhs = new Float64Array(d);
  for (let a = 0; a < d; a++) {
    const ca = cols[a] as number;
    scales[a] = shared.scales[ca] as number;
    rhs[a] = shared.full.rhs[ca] as number;
    for (let b = 0; b < d; b++) gram[a * d + b] = shared.full.gram[ca * D + (cols[b] as number)] as number;
  }
  return { shared, cols, scales, full: { gram, rhs, dim: d } };
}

/** The candidate's rows as a contiguous n×d matrix (for the exact fold refits). */
export function candidateRel(design: CandidateDesign, allocate: Allocate = freshArrays): Float64Array {
  const { shared, cols } = design;
  const d = cols.length;
  const D = shared.codes.length;
  const n = shared.rows;
  const rel = allocate(n * d);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) rel[i * d + j] = shared.rel[i * D + (cols[j] as number)] as number;
  return rel;
}
