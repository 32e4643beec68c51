/**
 * Fits one candidate law by NNLS on RELATIVE step-time error (each row divided by its own step time,
 * so a 10% miss counts the same on a fast and a slow shape) and scores it by cross-validation.
 * Written for speed (the controller refits thousands of jobs per round): the relative design matrix
 * is built once, fold fits downdate the full normal equations instead of rebuilding them.
 */
import { codesOf, writeFeatures, type FeatureSet } from './features';
import { approximateLooResiduals } from './approx-loo';
import { emptyEquations, nnlsNormal, nnlsWorkspace, type NnlsWorkspace, type NormalEquations } from './nnls';

/** A sample reduced to what the linear fit needs. */
export interface FitRow {
  readonly ps: number;
  readonly workers: number;
  /** The linear target: step time (sync) or one worker's step time (async). */
  readonly stepTime: number;
  /** √weight of the row (0 drops it). */
  readonly scale: number;
}

export interface CandidateFit {
  readonly set: FeatureSet;
  /** Ridge on the column-normalised coefficients (0 = plain NNLS). */
  readonly ridge: number;
  /** θ of the law, in the units of the raw features. */
  readonly theta: Float64Array;
  /** Mean squared log error of the held-out predictions (NaN when there are too few rows for CV). */
  readonly cvError: number;
  /** Held-out log residual log(t / t̂) of every row (0 without CV). */
  readonly cvResiduals: Float64Array;
  /** log t̂ of every row from the fit on all rows. */
  readonly logFitted: Float64Array;
}

/** Up to this many rows, leave-one-out refits every fold exactly; above, the closed-form shortcut. */
const LOO_LIMIT = 20;
/** Fewer rows than this: no cross-validation at all. */
export const MIN_CV_ROWS = 3;

const scratch = new Float64Array(16);

/** The law's step time at a shape. */
export function stepTimeAt(
  set: FeatureSet,
  theta: ArrayLike<number>,
  ps: number,
  workers: number,
  batch: number,
): number {
  writeFeatures(set, ps, workers, batch, scratch, 0);
  let t = 0;
  for (let i = 0; i < set.length; i++) t += (scratch[i] as number) * (theta[i] as number);
  return t;
}

interface Design {
  /** Relative, column-scaled features x/(t·s), n×d: rows of the least-squares problem, and
   *  rel_i·φ = t̂_i / t_i, so held-out predictions need no raw features. */
  readonly rel: Float64Array;
  readonly scales: Float64Array;
}

/** Builds the design once; column scales make the relative features comparable (Gram conditioning). */
function design(set: FeatureSet, rows: readonly FitRow[], batch: number): Design {
  const d = set.length;
  const n = rows.length;
  const rel = new Float64Array(n * d);
  const scales = new Float64Array(d);
  const codes = codesOf(set);
  for (let i = 0; i < n; i++) {
    const r = rows[i] as FitRow;
    writeFeatures(codes, r.ps, r.workers, batch, rel, i * d);
    for (let j = 0; j < d; j++) {
      const v = (rel[i * d + j] as number) / r.stepTime;
      rel[i * d + j] = v;
      scales[j] = (scales[j] as number) + v * v;
    }
  }
  for (let j = 0; j < d; j++) scales[j] = Math.sqrt((scales[j] as number) / Math.max(n, 1)) || 1;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) rel[i * d + j] = (rel[i * d + j] as number) / (scales[j] as number);
  return { rel, scales };
}

/** Adds (weight > 0) or removes (weight < 0) row i's equation: target 1 after dividing by its step time. */
function accumulate(eq: NormalEquations, rel: Float64Array, weight: number, i: number): void {
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

/** t̂_i / t_i of row i under the scaled coefficients φ. */
function ratioRow(rel: Float64Array, i: number, phi: Float64Array): number {
  const d = phi.length;
  let t = 0;
  for (let j = 0; j < d; j++) t += (rel[i * d + j] as number) * (phi[j] as number);
  return t;
}

/** NNLS with `ridge` added to the diagonal; θ in raw-feature units is written to `theta`. */
function solveRidge(
  eq: NormalEquations,
  ridge: number,
  scales: Float64Array,
  buffers: { readonly scratch: NormalEquations; readonly ws: NnlsWorkspace },
  theta: Float64Array,
  warm?: Float64Array,
): Float64Array {
  const d = eq.dim;
  const { scratch, ws } = buffers;
  scratch.gram.set(eq.gram);
  scratch.rhs.set(eq.rhs);
  for (let j = 0; j < d; j++) scratch.gram[j * d + j] = (scratch.gram[j * d + j] as number) + ridge;
  const phi = nnlsNormal(scratch, warm, ws);
  for (let j = 0; j < d; j++) theta[j] = (phi[j] as number) / (scales[j] as number);
  return phi;
}

/**
 * Fits `set` on all rows once per ridge (0 = plain NNLS) and cross-validates each fit. The design,
 * the normal equations and every fold's downdate are shared by the ridge variants.
 */
export function fitCandidates(
  set: FeatureSet,
  rows: readonly FitRow[],
  batch: number,
  ridges: readonly number[],
): CandidateFit[] {
  const d = set.length;
  const n = rows.length;
  const { rel, scales } = design(set, rows, batch);
  const full = emptyEquations(d);
  rows.forEach((r, i) => accumulate(full, rel, r.scale * r.scale, i));
  const buffers = { scratch: emptyEquations(d), ws: nnlsWorkspace(d) };
  const thetas = ridges.map(() => new Float64Array(d));
  const phis = ridges.map((ridge, v) => solveRidge(full, ridge, scales, buffers, thetas[v] as Float64Array));
  const logFitted = phis.map((phi) => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++)
      out[i] = Math.log((rows[i] as FitRow).stepTime * Math.max(ratioRow(rel, i, phi), 1e-300));
    return out;
  });
  const cvResiduals = ridges.map(() => new Float64Array(n));
  const cvError = ridges.map(() => Number.NaN);
  if (n > LOO_LIMIT) {
    const weights = rows.map((r) => r.scale * r.scale);
    ridges.forEach((ridge, v) => {
      approximateLooResiduals(
        full,
        rel,
        weights,
        phis[v] as Float64Array,
        ridge,
        cvResiduals[v] as Float64Array,
      );
      cvError[v] = meanSquare(cvResiduals[v] as Float64Array, rows);
    });
  } else if (n >= MIN_CV_ROWS) {
    const folds = n;
    const fold = emptyEquations(d);
    const theta = new Float64Array(d);
    for (let f = 0; f < folds; f++) {
      fold.gram.set(full.gram);
      fold.rhs.set(full.rhs);
      for (let i = f; i < n; i += folds) accumulate(fold, rel, -((rows[i] as FitRow).scale ** 2), i);
      for (let v = 0; v < ridges.length; v++) {
        const phi = solveRidge(fold, ridges[v] as number, scales, buffers, theta, phis[v]);
        const residuals = cvResiduals[v] as Float64Array;
        for (let i = f; i < n; i += folds) residuals[i] = -Math.log(Math.max(ratioRow(rel, i, phi), 1e-300));
      }
    }
    ridges.forEach((_, v) => (cvError[v] = meanSquare(cvResiduals[v] as Float64Array, rows)));
  }
  return ridges.map((ridge, v) => ({
    set,
    ridge,
    theta: thetas[v] as Float64Array,
    cvError: cvError[v] as number,
    cvResiduals: cvResiduals[v] as Float64Array,
    logFitted: logFitted[v] as Float64Array,
  }));
}

/** Mean square of the residuals of rows that count (scale > 0); NaN if none. */
function meanSquare(residuals: Float64Array, rows: readonly FitRow[]): number {
  let sum = 0;
  let count = 0;
  rows.forEach((r, i) => {
    if (r.scale > 0) {
      sum += (residuals[i] as number) ** 2;
      count += 1;
    }
  });
  return count > 0 ? sum / count : Number.NaN;
}
