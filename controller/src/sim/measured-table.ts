/**
 * The measured speeds of `test/data/measured-speeds.csv` as a dense ground-truth table per model:
 * exact where a shape was measured, interpolated between measured shapes elsewhere (see ADR 0002).
 */
import { fcnnlsVector } from 'ml-fcnnls';
import { parseMeasuredSpeeds, type MeasuredData } from '../models/speed';
import { linearRbf } from './measured-rbf';

/** One measured shape of one model, in global steps per second (sync, fixed global batch). */
export interface MeasuredRow {
  readonly model: string;
  readonly globalBatch: number;
  readonly ps: number;
  readonly workers: number;
  readonly stepsPerSec: number;
}

/** Flattens the speed model's parsed measurements (sync job types only: the CSV's). */
export function rowsOf(data: MeasuredData): MeasuredRow[] {
  return data.jobs
    .filter((j) => j.mode === 'sync')
    .flatMap((j) =>
      j.shapes.map((s) => ({
        model: j.model,
        globalBatch: j.globalBatch,
        ps: s.ps,
        workers: s.workers,
        stepsPerSec: s.stepsPerSec,
      })),
    );
}

/** Parses the measurement CSV with the speed model's parser and builds every model's table. */
export function measuredModelsFromCsv(text: string): Map<string, MeasuredModel> {
  return buildMeasuredModels(rowsOf(parseMeasuredSpeeds(text)));
}

/** Eq. 4 coefficients θ0..θ4 of a sync job: 1/f = θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p. */
export type SyncTheta = readonly [number, number, number, number, number];

export const syncFeatures = (m: number, p: number, w: number): number[] => [m / w, 1, w / p, w, p];

/** NNLS fit of Eq. 4 to the measured shapes of one model (used for the async derivation and the residual). */
export function fitSyncTheta(rows: readonly MeasuredRow[]): SyncTheta {
  const x = rows.map((r) => syncFeatures(r.globalBatch, r.ps, r.workers));
  const y = rows.map((r) => 1 / r.stepsPerSec);
  const k = fcnnlsVector(x, y).K.to1DArray();
  return [k[0] ?? 0, k[1] ?? 0, k[2] ?? 0, k[3] ?? 0, k[4] ?? 0];
}

/** Dense ground truth of one model over 1..maxPs × 1..maxWorkers. */
export interface MeasuredModel {
  readonly model: string;
  readonly globalBatch: number;
  readonly maxPs: number;
  readonly maxWorkers: number;
  readonly theta: SyncTheta;
  /** Sync global steps/s at (p, w), clamped to the measured range. */
  syncSpeed(p: number, w: number): number;
  /**
   * The same inside the measured range; beyond it DL2's extrapolation (`measured-rbf.ts`), scaled
   * to meet the table at the nearest measured shape (one value for both where they meet).
   */
  extrapolatedSpeed(p: number, w: number): number;
  /** DL2's own speed function (`measured-rbf.ts`) at (p, w), never below 1% of the slowest measurement. */
  rbfSpeed(p: number, w: number): number;
}

const evalTheta = (t: SyncTheta, m: number, p: number, w: number): number =>
  1 / syncFeatures(m, p, w).reduce((s, f, i) => s + f * (t[i] ?? 0), 0);

/**
 * Interpolation: the Eq. 4 fit times an inverse-distance-weighted average of the measured/fitted ratio of
 * the four nearest measured shapes. Measured shapes are reproduced exactly; between them the curve keeps
 * the fitted shape and the local measurement's bias.
 */
export function buildMeasuredModel(rows: readonly MeasuredRow[]): MeasuredModel {
  const first = rows[0];
  if (!first) throw new Error('no measured shapes');
  const theta = fitSyncTheta(rows);
  const m = first.globalBatch;
  const maxPs = Math.max(...rows.map((r) => r.ps));
  const maxWorkers = Math.max(...rows.map((r) => r.workers));
  const ratios = rows.map((r) => ({ r, ratio: r.stepsPerSec / evalTheta(theta, m, r.ps, r.workers) }));
  const table = new Float64Array(maxPs * maxWorkers);
  for (let p = 1; p <= maxPs; p++) {
    for (let w = 1; w <= maxWorkers; w++) {
      const near = ratios
        .map((q) => ({ q, d: Math.hypot(q.r.ps - p, q.r.workers - w) }))
        .sort((a, b) => a.d - b.d)
        .slice(0, 4);
      const exact = near.find((n) => n.d === 0);
      const ratio = exact
        ? exact.q.ratio
        : near.reduce((s, n) => s + n.q.ratio / n.d, 0) / near.reduce((s, n) => s + 1 / n.d, 0);
      table[(p - 1) * maxWorkers + (w - 1)] = evalTheta(theta, m, p, w) * ratio;
    }
  }
  const syncSpeed = (p: number, w: number): number => {
    const pi = Math.min(Math.max(Math.round(p), 1), maxPs);
    const wi = Math.min(Math.max(Math.round(w), 1), maxWorkers);
    return table[(pi - 1) * maxWorkers + (wi - 1)] ?? 0;
  };
  let fitted: ((p: number, w: number) => number) | null = null;
  const floor = 0.01 * Math.min(...rows.map((r) => r.stepsPerSec));
  const rbf = (p: number, w: number): number => {
    fitted ??= linearRbf(rows); // built on first use: O(shapes³)
    return Math.max(fitted(p, w), floor);
  };
  return {
    model: first.model,
    globalBatch: m,
    maxPs,
    maxWorkers,
    theta,
    syncSpeed,
    extrapolatedSpeed: (p, w) => {
      const pi = Math.max(Math.round(p), 1);
      const wi = Math.max(Math.round(w), 1);
      if (pi <= maxPs && wi <= maxWorkers) return syncSpeed(pi, wi);
      const edge = { p: Math.min(pi, maxPs), w: Math.min(wi, maxWorkers) };
      const at = rbf(edge.p, edge.w);
      const beyond = rbf(pi, wi);
      return syncSpeed(edge.p, edge.w) * (beyond / at);
    },
    rbfSpeed: (p, w) => rbf(Math.max(Math.round(p), 1), Math.max(Math.round(w), 1)),
  };
}

/** Groups the CSV rows by model and builds each model's table. */
export function buildMeasuredModels(rows: readonly MeasuredRow[]): Map<string, MeasuredModel> {
  const byModel = new Map<string, MeasuredRow[]>();
  for (const r of rows) byModel.set(r.model, [...(byModel.get(r.model) ?? []), r]);
  return new Map([...byModel].map(([k, v]) => [k, buildMeasuredModel(v)]));
}
