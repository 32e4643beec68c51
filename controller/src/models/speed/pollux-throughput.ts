/**
 * Pollux's system-throughput model (Qiao et al., OSDI'21, §3.2), implemented from the paper's
 * formula for comparison only (`eval speed` on all-reduce data):
 *   T_grad = α_grad + β_grad·m                                   (m = per-GPU batch)
 *   T_sync = 0 (K = 1) | α_local + β_local·(K − 2) (one node) | α_node + β_node·(K − 2) (several)
 *   T_iter = (T_grad^γ + T_sync^γ)^(1/γ),  γ ∈ [1, 10]           (no gradient accumulation)
 * fitted, as Pollux does, by minimising the squared error of log T_iter (= of log throughput at a
 * configuration), all parameters ≥ 0. Its prior-driven exploration (§4.1): a parameter the samples
 * cannot see is held at 0 (sync inside a node free until measured, no retrogression until a job
 * has run on more than 2 GPUs), and without multi-node samples inter-node sync is assumed at least
 * 1.1× the intra-node one (as the artifact's fit does). The artifact also adds small penalties
 * (γ toward 1, β toward 0); we leave them out, as the paper's formula does: without them the
 * baseline is the more accurate one on Pollux's own data at the measured sizes (ADR 0026).
 * Levenberg–Marquardt, from three starts of γ, stands in for the artifact's L-BFGS-B.
 */
import type { AllReduceFitOptions, AllReduceSample } from './allreduce-types';
import { checkAllReduceSamples, checkAllReduceShape, perWorkerBatch } from './allreduce-samples';
import { levenbergMarquardt } from './levenberg-marquardt';
import type { SpeedPrediction } from './types';

export interface PolluxParams {
  readonly alphaGrad: number;
  readonly betaGrad: number;
  readonly alphaLocal: number;
  readonly betaLocal: number;
  readonly alphaNode: number;
  readonly betaNode: number;
  readonly gamma: number;
}

export interface PolluxThroughputModel {
  readonly params: PolluxParams;
  /** Steps/s at `workers` GPUs on `servers` nodes (same contract as the all-reduce model). */
  predict(workers: number, servers: number, localBatch?: number): SpeedPrediction;
}

/** Pollux's T_iter (seconds) for a configuration. */
export function polluxStepTime(p: PolluxParams, workers: number, servers: number, m: number): number {
  const tGrad = p.alphaGrad + p.betaGrad * m;
  const retro = Math.max(workers - 2, 0);
  const tSync =
    workers <= 1 ? 0 : servers <= 1 ? p.alphaLocal + p.betaLocal * retro : p.alphaNode + p.betaNode * retro;
  if (tSync <= 0) return tGrad;
  // (a^γ + b^γ)^(1/γ) computed as max·(1 + (min/max)^γ)^(1/γ): no overflow at γ = 10.
  const hi = Math.max(tGrad, tSync);
  const lo = Math.min(tGrad, tSync);
  return hi * (1 + (lo / hi) ** p.gamma) ** (1 / p.gamma);
}

const Z90 = 1.645;
const GAMMA_STARTS = [1.1, 2, 4] as const;

interface Layout {
  /** Which of the six α/β parameters the fit moves (the rest stay 0). */
  readonly free: readonly boolean[];
  /** One distinct per-GPU batch: α_grad is tied to β_grad·m (they cannot be told apart). */
  readonly tiedGrad: number | undefined;
}

function layoutOf(rows: readonly { workers: number; servers: number; m: number }[]): Layout {
  const local = rows.some((r) => r.servers === 1 && r.workers > 1);
  const localBig = rows.some((r) => r.servers === 1 && r.workers > 2);
  const node = rows.some((r) => r.servers > 1);
  const nodeBig = rows.some((r) => r.servers > 1 && r.workers > 2);
  const ms = new Set(rows.map((r) => r.m));
  const tiedGrad = ms.size === 1 ? rows[0]?.m : undefined;
  return { free: [tiedGrad === undefined, true, local, localBig, node, nodeBig], tiedGrad };
}

/** Unknowns x (log α/β of the free ones, then the γ logit) → parameters. */
function paramsOf(x: ArrayLike<number>, layout: Layout): PolluxParams {
  const v = new Array<number>(6).fill(0);
  let k = 0;
  for (let j = 0; j < 6; j++) if (layout.free[j]) v[j] = Math.exp(x[k++] as number);
  if (layout.tiedGrad !== undefined) v[0] = (v[1] as number) * layout.tiedGrad;
  const gamma = 1 + 9 / (1 + Math.exp(-(x[k] as number)));
  return {
    alphaGrad: v[0] as number,
    betaGrad: v[1] as number,
    alphaLocal: v[2] as number,
    betaLocal: v[3] as number,
    alphaNode: v[4] as number,
    betaNode: v[5] as number,
    gamma,
  };
}

/** A start from the data's own scale (the artifact's fixed start assumes seconds of a GPU job). */
function startOf(rows: readonly Row[], layout: Layout, gamma: number): number[] {
  const times = rows.map((r) => r.t).sort((a, b) => a - b);
  const tMin = times[0] as number;
  const tMed = times[Math.floor(times.length / 2)] as number;
  const mMean = rows.reduce((a, r) => a + r.m, 0) / rows.length;
  const guess = [tMin / 2, tMin / (2 * mMean), tMed / 2, tMed / 20, tMed / 2, tMed / 20];
  const x = guess.filter((_, j) => layout.free[j]).map((g) => Math.log(Math.max(g, 1e-12)));
  x.push(Math.log((gamma - 1) / (10 - gamma)));
  return x;
}

interface Row {
  readonly workers: number;
  readonly servers: number;
  readonly m: number;
  readonly t: number;
  readonly scale: number;
}

/** Fits Pollux's model to the samples (≥ 1). */
export function fitPolluxThroughput(
  samples: readonly AllReduceSample[],
  opts: AllReduceFitOptions = {},
): PolluxThroughputModel {
  checkAllReduceSamples(samples, opts);
  if (samples.length === 0) throw new RangeError('fitPolluxThroughput: at least one speed sample is needed');
  const rows: Row[] = samples.map((s) => ({
    workers: s.workers,
    servers: s.servers,
    m: perWorkerBatch(s.workers, s.localBatch, opts.globalBatch),
    t: 1 / s.stepsPerSec,
    scale: Math.sqrt(s.weight ?? 1),
  }));
  const layout = layoutOf(rows);
  const residuals = (x: ArrayLike<number>, out: Float64Array): void => {
    const p = paramsOf(x, layout);
    rows.forEach((r, i) => {
      const t = polluxStepTime(p, r.workers, r.servers, r.m);
      out[i] = r.scale * Math.log(Math.max(t, 1e-300) / r.t);
    });
  };
  let best: { x: Float64Array; cost: number } | undefined;
  for (const gamma of GAMMA_STARTS) {
    const fit = levenbergMarquardt(residuals, startOf(rows, layout, gamma), rows.length);
    if (best === undefined || fit.cost < best.cost) best = fit;
  }
  const params = withPriors(paramsOf((best as { x: Float64Array }).x, layout), layout);
  return modelOf(params, rows, opts);
}

/** Without multi-node samples, inter-node sync is taken as at least 1.1× the intra-node one. */
function withPriors(p: PolluxParams, layout: Layout): PolluxParams {
  if (layout.free[4]) return p;
  return {
    ...p,
    alphaNode: Math.max(p.alphaNode, 1.1 * p.alphaLocal),
    betaNode: Math.max(p.betaNode, 1.1 * p.betaLocal),
  };
}

function modelOf(
  params: PolluxParams,
  rows: readonly Row[],
  opts: AllReduceFitOptions,
): PolluxThroughputModel {
  const logMisses = rows.map((r) => Math.log(polluxStepTime(params, r.workers, r.servers, r.m) / r.t));
  const dof = rows.length - 7;
  const spread = dof > 0 ? Math.sqrt(logMisses.reduce((a, v) => a + v * v, 0) / dof) : 0.5;
  return {
    params,
    predict(workers, servers, localBatch) {
      checkAllReduceShape(workers, servers, localBatch);
      const m = perWorkerBatch(workers, localBatch, opts.globalBatch);
      const f = 1 / Math.max(polluxStepTime(params, workers, servers, m), 1e-300);
      const half = Z90 * Math.max(spread, 0.01);
      return { stepsPerSec: f, lower: f * Math.exp(-half), upper: f * Math.exp(half) };
    },
  };
}
