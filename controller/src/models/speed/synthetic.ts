/**
 * Synthetic jobs with KNOWN speed laws, to check the model is not tuned to the one measured file:
 * paper Eq. 4 and Eq. 3 laws (the paper's ResNet-50 coefficients and others), Eq. 2 with different
 * constants, and two laws outside every candidate family (partial overlap, a hard bottleneck).
 * Measurements get log-normal noise; everything is seeded.
 */
import type { MeasuredData, MeasuredJob, MeasuredShape } from './measured-data';
import { gaussian, mixSeed, seededRandom } from '../random';
import type { TrainingMode } from './types';

/** A speed law: job steps per second at (p, w). */
export interface SpeedLaw {
  readonly name: string;
  readonly mode: TrainingMode;
  readonly globalBatch: number;
  readonly stepsPerSec: (ps: number, workers: number) => number;
}

/** Sync Eq. 4: f = 1 / (θ·[M/w, 1, w/p, w, p]). */
export function eq4Law(
  name: string,
  theta: readonly [number, number, number, number, number],
  globalBatch: number,
): SpeedLaw {
  const [a, b, c, d, e] = theta;
  return {
    name,
    mode: 'sync',
    globalBatch,
    stepsPerSec: (p, w) => 1 / ((a * globalBatch) / w + b + (c * w) / p + d * w + e * p),
  };
}

/** Async Eq. 3: f = w / (θ·[1, w/p, w, p]). */
export function eq3Law(name: string, theta: readonly [number, number, number, number]): SpeedLaw {
  const [a, b, c, d] = theta;
  return {
    name,
    mode: 'async',
    globalBatch: 1,
    stepsPerSec: (p, w) => w / (a + (b * w) / p + c * w + d * p),
  };
}

/** The default family of synthetic laws. */
export const SYNTHETIC_LAWS: readonly SpeedLaw[] = [
  eq4Law('eq4-paper-resnet50', [1.02 / 32, 2.78, 4.92, 0, 0.02], 32),
  eq4Law('eq4-comm-heavy', [0.0002, 0.1, 0.5, 0.01, 0.005], 64),
  // Eq. 2 with w′ = w: T_fwd 4 ms/sample, T_back 0.15 s, 2S/B + T_upd = 0.45 s, δ = 0.01, δ′ = 0.005.
  eq4Law('eq2-derived', [0.004, 0.15, 0.45, 0.01, 0.005], 128),
  {
    name: 'eq2-partial-overlap',
    mode: 'sync',
    globalBatch: 64,
    stepsPerSec: (p, w) => 1 / ((0.003 * 64) / w + 0.08 + (0.3 * Math.sqrt(w)) / p + 0.004 * w),
  },
  {
    name: 'bottleneck',
    mode: 'sync',
    globalBatch: 64,
    stepsPerSec: (p, w) => 1 / (Math.max((0.02 * 64) / w + 0.1, (0.4 + 0.3 * w) / p) + 0.01 * w),
  },
  eq3Law('eq3-paper-resnet50', [2.83, 3.92, 0, 0.11]),
  eq3Law('eq3-comm', [0.3, 0.6, 0.02, 0.01]),
];

export interface SyntheticOptions {
  /** σ of the log-normal measurement noise (0.04 ≈ the measured file). */
  readonly noise: number;
  readonly seed: number;
  /** Share of measurements that are disturbed (speed × 0.3–0.6, e.g. a straggler during the pre-run). */
  readonly outlierRate?: number;
  readonly laws?: readonly SpeedLaw[];
  readonly maxPs?: number;
  readonly maxWorkers?: number;
}

/** One job per law, measured on every (p, w) of the grid, with noise. */
export function syntheticSpeedData(opts: SyntheticOptions): MeasuredData {
  const maxPs = opts.maxPs ?? 12;
  const maxWorkers = opts.maxWorkers ?? 16;
  const jobs: MeasuredJob[] = (opts.laws ?? SYNTHETIC_LAWS).map((law, index) => {
    const random = seededRandom(mixSeed(opts.seed, index));
    const shapes: MeasuredShape[] = [];
    for (let ps = 1; ps <= maxPs; ps++) {
      for (let workers = 1; workers <= maxWorkers; workers++) {
        const disturbed = random() < (opts.outlierRate ?? 0) ? 0.3 + 0.3 * random() : 1;
        const stepsPerSec =
          law.stepsPerSec(ps, workers) * Math.exp(opts.noise * gaussian(random)) * disturbed;
        const perWorker = (stepsPerSec * law.globalBatch) / workers;
        shapes.push({
          ps,
          workers,
          stepsPerSec,
          workerSamplesPerSec: new Array<number>(workers).fill(perWorker),
        });
      }
    }
    return { model: law.name, mode: law.mode, globalBatch: law.globalBatch, shapes };
  });
  return { jobs, excludedRows: 0 };
}
