/**
 * The ground truth of an emulated job: its true speed at a shape (paper Eq. 3/4) and its
 * true loss curve (Eq. 1), plus the epoch at which the job's own convergence rule stops it.
 * Pure; the trainer process and the tests share it.
 */
import { seededRandom } from '../../models/random';

export interface GroundTruth {
  readonly mode: 'sync' | 'async';
  /** Sync: global batch; async: per-worker batch. */
  readonly batchSize: number;
  readonly stepsPerEpoch: number;
  readonly theta: readonly number[];
  readonly beta: readonly [number, number, number];
  readonly threshold: number;
  readonly patience: number;
  readonly maxEpochs: number;
}

const th = (t: readonly number[], i: number): number => t[i] ?? 0;

/** Job speed in steps/s: sync = global steps (Eq. 4), async = sum over workers (Eq. 3). */
export function trueSpeed(g: GroundTruth, ps: number, workers: number): number {
  const t = g.theta;
  if (g.mode === 'sync') {
    const time =
      (th(t, 0) * g.batchSize) / workers +
      th(t, 1) +
      (th(t, 2) * workers) / ps +
      th(t, 3) * workers +
      th(t, 4) * ps;
    return 1 / time;
  }
  const time = th(t, 0) + (th(t, 1) * workers) / ps + th(t, 2) * workers + th(t, 3) * ps;
  return workers / time;
}

/** The true (noise-free) loss at global step k. */
export function trueLoss(g: GroundTruth, k: number): number {
  const [b0, b1, b2] = g.beta;
  return 1 / (b0 * k + b1) + b2;
}

/**
 * Epochs the job trains: the first epoch e (1-based count) at which the per-epoch decrease of the
 * normalised end-of-epoch loss has stayed below the threshold for `patience` epochs; at most maxEpochs.
 */
export function trueEpochs(g: GroundTruth): number {
  const first = trueLoss(g, 0);
  let calm = 0;
  let prev = 1;
  for (let e = 1; e <= g.maxEpochs; e += 1) {
    const l = trueLoss(g, e * g.stepsPerEpoch) / first;
    calm = prev - l < g.threshold ? calm + 1 : 0;
    if (calm >= g.patience) return e;
    prev = l;
  }
  return g.maxEpochs;
}

/** A small deterministic PRNG (mulberry32) with a Gaussian helper, for reproducible noise. */
export function rng(seed: number): { uniform(): number; gaussian(): number } {
  const uniform = seededRandom(seed);
  return {
    uniform,
    gaussian: () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform()),
  };
}
