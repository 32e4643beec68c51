/**
 * Fits the all-reduce law (allreduce-law.ts) to a job's samples. Like the PS model:
 * 1. NNLS on RELATIVE error: each row is divided by its own squared step time, so a 10% miss counts
 *    the same on a fast and a slow shape; rows are weighted by the samples' weights.
 * 2. Columns scaled to unit RMS and a small ridge on the scaled coefficients: with few samples the
 *    terms are nearly collinear and plain NNLS jumps to a sparse vertex; the ridge shares the fit
 *    between them, its pull fades as samples accumulate (the Gram diagonal grows like n), and one
 *    common factor afterwards undoes the shrinkage of the level.
 * 3. Leave-one-out residuals (exact refits, warm-started) give the 90% interval and, with ≥ 8
 *    samples, drop one sample whose held-out miss is far outside the others' (a disturbed step).
 * @example fitAllReduceSpeed([{ workers: 1, servers: 1, stepsPerSec: 4 }, …], { globalBatch: 256 }).predict(8, 2)
 */
import {
  ALLREDUCE_DIM,
  ALLREDUCE_TERMS,
  squaredStepTime,
  termSupport,
  writeAllReduceTerms,
} from './allreduce-law';
import type { AllReduceFitOptions, AllReduceSample, AllReduceSpeedModel } from './allreduce-types';
import {
  addRow,
  emptyEquations,
  nnlsNormal,
  nnlsWorkspace,
  subtractEquations,
  type NormalEquations,
} from './nnls';
import { checkAllReduceSamples, checkAllReduceShape, perWorkerBatch } from './allreduce-samples';
import { median } from './samples';

const Z90 = 1.645;
/**
 * Ridge on unit-RMS columns (see 2.). On Pollux's data anything from 0 to 0.2 moves the pooled median
 * by ≤ 0.2 point (ADR 0026); it is there for the runtime's first few, nearly collinear samples.
 */
const RIDGE = 0.05;
/** Spread when there are too few samples to cross-validate: the interval spans ×/÷ 2.3. */
const PRIOR_LOG_SPREAD = 0.5;
const MIN_LOG_SPREAD = 0.02;
const MIN_CV_ROWS = 3;
/** Above this many rows the in-sample residuals, inflated for the fitted terms, stand in for LOO. */
const LOO_LIMIT = 40;
const ROBUST_MIN_SAMPLES = 8;
const OUTLIER_SIGMAS = 6;
const OUTLIER_MIN_LOG = Math.log(2);

interface Row {
  readonly workers: number;
  readonly servers: number;
  readonly localBatch: number;
  /** Squared step time (s²). */
  readonly t2: number;
  /** √weight; 0 drops the row. */
  readonly scale: number;
}

/** The relative, column-scaled design of the active terms and its weighted normal equations. */
interface Design {
  readonly columns: readonly number[];
  readonly scales: Float64Array;
  /** rows × columns.length, x_j / (t² · s_j). */
  readonly rel: Float64Array;
  readonly full: NormalEquations;
}

function buildDesign(rows: readonly Row[]): Design {
  const kept = rows.filter((r) => r.scale > 0);
  const { active } = termSupport(kept);
  const columns = ALLREDUCE_TERMS.map((_, j) => j).filter((j) => active[j]);
  const d = columns.length;
  const terms = new Float64Array(ALLREDUCE_DIM);
  const raw = new Float64Array(rows.length * d);
  const sumSq = new Float64Array(d);
  rows.forEach((r, i) => {
    writeAllReduceTerms(r.workers, r.servers, r.localBatch, terms);
    columns.forEach((j, c) => {
      const v = (terms[j] as number) / r.t2;
      raw[i * d + c] = v;
      if (r.scale > 0) sumSq[c] = (sumSq[c] as number) + v * v;
    });
  });
  const scales = sumSq.map((s) => Math.sqrt(s / Math.max(kept.length, 1)) || 1);
  const rel = raw.map((v, k) => v / (scales[k % d] as number));
  const full = emptyEquations(d);
  rows.forEach((r, i) => {
    if (r.scale > 0) addRow(full, rel.subarray(i * d, (i + 1) * d), 1, r.scale);
  });
  return { columns, scales, rel, full };
}

/**
 * NNLS with the ridge, then the one common factor that best fits the rows without it: the ridge is
 * there to share the fit between nearly collinear terms, not to shrink the level (which would
 * predict every shape a little fast). Returns φ (scaled coefficients).
 */
function solve(eq: NormalEquations, warm?: Float64Array): Float64Array {
  const d = eq.dim;
  const withRidge: NormalEquations = { gram: eq.gram.slice(), rhs: eq.rhs.slice(), dim: d };
  for (let j = 0; j < d; j++) withRidge.gram[j * d + j] = (withRidge.gram[j * d + j] as number) + RIDGE;
  const phi = nnlsNormal(withRidge, warm, nnlsWorkspace(d));
  let fit = 0;
  let norm = 0;
  for (let a = 0; a < d; a++) {
    fit += (phi[a] as number) * (eq.rhs[a] as number);
    for (let b = 0; b < d; b++)
      norm += (phi[a] as number) * (eq.gram[a * d + b] as number) * (phi[b] as number);
  }
  if (fit > 0 && norm > 0) for (let a = 0; a < d; a++) phi[a] = ((phi[a] as number) * fit) / norm;
  return phi;
}

/** t̂²/t² of row i under φ. */
function ratio(design: Design, i: number, phi: Float64Array): number {
  const d = design.columns.length;
  let s = 0;
  for (let c = 0; c < d; c++) s += (design.rel[i * d + c] as number) * (phi[c] as number);
  return s;
}

/** Held-out log miss log(T / T̂) of every kept row (NaN for dropped rows). */
function heldOutResiduals(design: Design, rows: readonly Row[], phi: Float64Array): Float64Array {
  const n = rows.length;
  const d = design.columns.length;
  const out = new Float64Array(n).fill(Number.NaN);
  const used = rows.filter((r) => r.scale > 0).length;
  if (used > LOO_LIMIT) {
    const inflate = Math.sqrt(used / Math.max(used - d, 1));
    rows.forEach((r, i) => {
      if (r.scale > 0) out[i] = -0.5 * Math.log(Math.max(ratio(design, i, phi), 1e-300)) * inflate;
    });
    return out;
  }
  rows.forEach((r, i) => {
    if (r.scale <= 0) return;
    const row = emptyEquations(d);
    addRow(row, design.rel.subarray(i * d, (i + 1) * d), 1, r.scale);
    const fold = subtractEquations(design.full, row);
    const foldPhi = solve(fold, phi);
    out[i] = -0.5 * Math.log(Math.max(ratio(design, i, foldPhi), 1e-300));
  });
  return out;
}

/** Index of the one sample to drop as an outlier, or -1. */
function outlierOf(residuals: Float64Array): number {
  const misses = Array.from(residuals, Math.abs).filter((v) => Number.isFinite(v));
  if (misses.length < ROBUST_MIN_SAMPLES) return -1;
  let worst = -1;
  residuals.forEach((r, i) => {
    if (Number.isFinite(r) && (worst < 0 || Math.abs(r) > Math.abs(residuals[worst] as number))) worst = i;
  });
  const m = Math.abs(residuals[worst] as number);
  return m > OUTLIER_MIN_LOG && m > OUTLIER_SIGMAS * 1.4826 * median(misses) ? worst : -1;
}

interface Fitted {
  readonly theta: Float64Array;
  readonly residuals: Float64Array;
}

function fitRows(rows: readonly Row[]): Fitted {
  const design = buildDesign(rows);
  const phi = solve(design.full);
  const theta = new Float64Array(ALLREDUCE_DIM);
  design.columns.forEach((j, c) => (theta[j] = (phi[c] as number) / (design.scales[c] as number)));
  const used = rows.filter((r) => r.scale > 0).length;
  const residuals =
    used >= MIN_CV_ROWS
      ? heldOutResiduals(design, rows, phi)
      : new Float64Array(rows.length).fill(Number.NaN);
  return { theta, residuals };
}

function spreadOf(residuals: Float64Array): number {
  const finite = Array.from(residuals).filter((v) => Number.isFinite(v));
  if (finite.length < MIN_CV_ROWS) return PRIOR_LOG_SPREAD;
  const ms = finite.reduce((a, v) => a + v * v, 0) / finite.length;
  return Math.max(Math.sqrt(ms), MIN_LOG_SPREAD);
}

/**
 * Fits the all-reduce speed model to the samples of one job; needs ≥ 1 sample (with fewer than 3 the
 * interval is the wide prior). Throws a RangeError naming the first invalid sample.
 */
export function fitAllReduceSpeed(
  samples: readonly AllReduceSample[],
  opts: AllReduceFitOptions = {},
): AllReduceSpeedModel {
  checkAllReduceSamples(samples, opts);
  if (samples.length === 0) throw new RangeError('fitAllReduceSpeed: at least one speed sample is needed');
  let rows: Row[] = samples.map((s) => ({
    workers: s.workers,
    servers: s.servers,
    localBatch: perWorkerBatch(s.workers, s.localBatch, opts.globalBatch),
    t2: 1 / (s.stepsPerSec * s.stepsPerSec),
    scale: Math.sqrt(s.weight ?? 1),
  }));
  let fitted = fitRows(rows);
  const dropped: number[] = [];
  const outlier = outlierOf(fitted.residuals);
  if (outlier >= 0) {
    dropped.push(outlier);
    rows = rows.map((r, i) => (i === outlier ? { ...r, scale: 0 } : r));
    fitted = fitRows(rows);
  }
  return modelOf(fitted, rows, opts, dropped);
}

function modelOf(
  fitted: Fitted,
  rows: readonly Row[],
  opts: AllReduceFitOptions,
  dropped: readonly number[],
): AllReduceSpeedModel {
  const { theta } = fitted;
  const logSpread = spreadOf(fitted.residuals);
  // A floor far below any measured step: the law cannot reach 0 with a compute term in the fit, but
  // a fit on multi-worker samples alone may put all the constant on sync; the floor keeps speeds finite.
  const minT2 = Math.min(...rows.filter((r) => r.scale > 0).map((r) => r.t2)) * 1e-6;
  const scratch = new Float64Array(ALLREDUCE_DIM);
  const coefficients = Object.fromEntries(ALLREDUCE_TERMS.map((name, j) => [name, theta[j] as number]));
  return {
    coefficients,
    logSpread,
    dropped,
    predict(workers, servers, localBatch) {
      checkAllReduceShape(workers, servers, localBatch);
      const m = perWorkerBatch(workers, localBatch, opts.globalBatch);
      const t2 = Math.max(squaredStepTime(theta, workers, servers, m, scratch), minT2);
      const f = 1 / Math.sqrt(t2);
      const half = Z90 * logSpread;
      return { stepsPerSec: f, lower: f * Math.exp(-half), upper: f * Math.exp(half) };
    },
  };
}
