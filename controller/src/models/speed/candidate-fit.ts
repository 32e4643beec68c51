/**
 * Fits one candidate law by NNLS on RELATIVE step-time error (each row divided by its own step time,
 * so a 10% miss counts the same on a fast and a slow shape) and scores it by cross-validation.
 * Written for speed (the controller refits thousands of jobs per round): the relative design matrix
 * is built once for all candidate laws (shared-design.ts), fold fits downdate the full normal
 * equations instead of rebuilding them, and above LOO_LIMIT rows the held-out residuals come in
 * closed form (approx-loo.ts).
 */
import { writeFeatures, type FeatureSet } from './features';
import { approximateLooResiduals } from './approx-loo';
import { emptyEquations, nnlsNormal, nnlsWorkspace, type NnlsWorkspace, type NormalEquations } from './nnls';
import {
  accumulate,
  candidateRel,
  gatherDesign,
  sharedDesign,
  type CandidateDesign,
  type FitRow,
  type SharedDesign,
} from './shared-design';
import { freshArrays, type Allocate } from '../scratch-arena';

export type { FitRow } from './shared-design';

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

type Buffers = { readonly scratch: NormalEquations; readonly ws: NnlsWorkspace };
/** Solver scratch per dimension, reused by every fit (fits run one at a time; fewer allocations). */
const buffersByDim: Buffers[] = [];

function buffersOf(d: number): Buffers {
  let b = buffersByDim[d];
  if (b === undefined) {
    b = { scratch: emptyEquations(d), ws: nnlsWorkspace(d) };
    buffersByDim[d] = b;
  }
  return b;
}

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
  buffers: Buffers,
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
  shared: SharedDesign = sharedDesign([set], rows, batch),
  allocate: Allocate = freshArrays,
): CandidateFit[] {
  const d = set.length;
  const n = rows.length;
  const design = gatherDesign(shared, set, allocate);
  const buffers = buffersOf(d);
  const thetas = ridges.map(() => new Float64Array(d));
  const phis = ridges.map((ridge, v) =>
    solveRidge(design.full, ridge, design.scales, buffers, thetas[v] as Float64Array),
  );
  const parts = {
    thetas,
    cvError: ridges.map(() => Number.NaN),
    cvResiduals: ridges.map(() => allocate(n)),
    logFitted: ridges.map(() => allocate(n)),
  };
  if (n > LOO_LIMIT) looShortcut(design, rows, ridges, phis, parts, allocate);
  else looExact(design, rows, ridges, phis, { ...buffers, allocate }, parts);
  return assemble(set, ridges, parts);
}

interface Parts {
  readonly thetas: readonly Float64Array[];
  readonly cvError: number[];
  readonly cvResiduals: readonly Float64Array[];
  readonly logFitted: readonly Float64Array[];
}

/** Many rows: closed-form held-out residuals; one pass gives the fitted ratios t̂/t too. */
function looShortcut(
  design: CandidateDesign,
  rows: readonly FitRow[],
  ridges: readonly number[],
  phis: readonly Float64Array[],
  parts: Parts,
  allocate: Allocate,
): void {
  const n = rows.length;
  const weights = allocate(n);
  for (let i = 0; i < n; i++) weights[i] = (rows[i] as FitRow).scale ** 2;
  for (let v = 0; v < ridges.length; v++) {
    const ratios = parts.logFitted[v] as Float64Array;
    const residuals = parts.cvResiduals[v] as Float64Array;
    const phi = phis[v] as Float64Array;
    approximateLooResiduals(design, weights, phi, ridges[v] as number, residuals, ratios);
    for (let i = 0; i < n; i++)
      ratios[i] = Math.log((rows[i] as FitRow).stepTime * Math.max(ratios[i] as number, 1e-300));
    parts.cvError[v] = meanSquare(residuals, rows);
  }
}

/** Few rows: every fold refitted exactly (a downdate of the full normal equations, warm-started NNLS). */
function looExact(
  design: CandidateDesign,
  rows: readonly FitRow[],
  ridges: readonly number[],
  phis: readonly Float64Array[],
  buffers: Buffers & { readonly allocate: Allocate },
  parts: Parts,
): void {
  const { scales, full } = design;
  const rel = candidateRel(design, buffers.allocate);
  const d = full.dim;
  const n = rows.length;
  phis.forEach((phi, v) => {
    const out = parts.logFitted[v] as Float64Array;
    for (let i = 0; i < n; i++)
      out[i] = Math.log((rows[i] as FitRow).stepTime * Math.max(ratioRow(rel, i, phi), 1e-300));
  });
  if (n < MIN_CV_ROWS) return;
  const fold: NormalEquations = { gram: buffers.allocate(d * d), rhs: new Float64Array(d), dim: d };
  const theta = new Float64Array(d);
  for (let f = 0; f < n; f++) {
    fold.gram.set(full.gram);
    fold.rhs.set(full.rhs);
    accumulate(fold, rel, -((rows[f] as FitRow).scale ** 2), f);
    for (let v = 0; v < ridges.length; v++) {
      const phi = solveRidge(fold, ridges[v] as number, scales, buffers, theta, phis[v]);
      (parts.cvResiduals[v] as Float64Array)[f] = -Math.log(Math.max(ratioRow(rel, f, phi), 1e-300));
    }
  }
  ridges.forEach((_, v) => (parts.cvError[v] = meanSquare(parts.cvResiduals[v] as Float64Array, rows)));
}

function assemble(set: FeatureSet, ridges: readonly number[], parts: Parts): CandidateFit[] {
  return ridges.map((ridge, v) => ({
    set,
    ridge,
    theta: parts.thetas[v] as Float64Array,
    cvError: parts.cvError[v] as number,
    cvResiduals: parts.cvResiduals[v] as Float64Array,
    logFitted: parts.logFitted[v] as Float64Array,
  }));
}

/** Mean square of the residuals of rows that count (scale > 0); NaN if none. */
function meanSquare(residuals: Float64Array, rows: readonly FitRow[]): number {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < rows.length; i++) {
    if ((rows[i] as FitRow).scale > 0) {
      sum += (residuals[i] as number) ** 2;
      count += 1;
    }
  }
  return count > 0 ? sum / count : Number.NaN;
}
