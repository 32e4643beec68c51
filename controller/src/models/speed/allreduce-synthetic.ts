/**
 * Synthetic all-reduce jobs with known step-time laws (for tests and `eval`'s sanity): Pollux's
 * γ-norm at γ = 1, 1.4 and 2 with constants of the size Pollux's fits give on its measured models,
 * and a law in neither model's family (DDP overlapping half the compute, then the step is the longer
 * of compute and sync). Placements of 1–4 nodes × 1–4 GPUs at five per-GPU batches, log-normal noise.
 */
import type { AllReduceConfiguration, AllReduceData } from './pollux-data';
import { polluxStepTime, type PolluxParams } from './pollux-throughput';
import { gaussian, seededRandom } from '../random';

export interface SyntheticAllReduceLaw {
  readonly name: string;
  /** Step time (s) at (workers, servers, per-GPU batch). */
  readonly stepTime: (workers: number, servers: number, m: number) => number;
  readonly batches: readonly number[];
}

const pollux =
  (p: PolluxParams) =>
  (w: number, n: number, m: number): number =>
    polluxStepTime(p, w, n, m);

export const SYNTHETIC_ALLREDUCE_LAWS: readonly SyntheticAllReduceLaw[] = [
  {
    name: 'pollux-gamma-2',
    stepTime: pollux({
      alphaGrad: 0.046,
      betaGrad: 0.0043,
      alphaLocal: 0.093,
      betaLocal: 0.0097,
      alphaNode: 0.28,
      betaNode: 0.0053,
      gamma: 2,
    }),
    batches: [20, 40, 80, 160, 200],
  },
  {
    name: 'pollux-gamma-1.4',
    stepTime: pollux({
      alphaGrad: 0.35,
      betaGrad: 0.039,
      alphaLocal: 0.059,
      betaLocal: 0.045,
      alphaNode: 1.16,
      betaNode: 0.014,
      gamma: 1.4,
    }),
    batches: [4, 6, 8, 11, 12],
  },
  {
    name: 'pollux-gamma-1',
    stepTime: pollux({
      alphaGrad: 0.007,
      betaGrad: 8e-7,
      alphaLocal: 0.0029,
      betaLocal: 0.0012,
      alphaNode: 0.015,
      betaNode: 0.00044,
      gamma: 1,
    }),
    batches: [32, 256, 1024, 4096, 16384],
  },
  {
    name: 'half-overlap-max',
    stepTime: (w, n, m) => {
      const compute = 0.02 + 0.003 * m;
      if (w <= 1) return compute;
      const sync = (n > 1 ? 0.2 : 0.03) + 0.01 * (w - 2);
      return Math.max(compute, 0.5 * compute + sync);
    },
    batches: [16, 32, 64, 128, 256],
  },
];

/** Placements of 1..maxNodes nodes with 1..maxGpus GPUs each, as non-increasing digit strings. */
export function syntheticPlacements(maxNodes = 4, maxGpus = 4): string[] {
  const out: string[] = [];
  const grow = (prefix: string, cap: number): void => {
    if (prefix.length > 0) out.push(prefix);
    if (prefix.length === maxNodes) return;
    for (let g = cap; g >= 1; g--) grow(prefix + String(g), g);
  };
  grow('', maxGpus);
  return out;
}

/** Every law at every placement and batch, with log-normal noise σ = `noise`. */
export function syntheticAllReduceData(opts: { noise: number; seed: number }): AllReduceData {
  const random = seededRandom(opts.seed);
  const placements = syntheticPlacements();
  const jobs = SYNTHETIC_ALLREDUCE_LAWS.map((law) => {
    const configurations: AllReduceConfiguration[] = placements.flatMap((placement) => {
      const counts = [...placement].map(Number);
      const workers = counts.reduce((a, b) => a + b, 0);
      const servers = counts.length;
      return law.batches.map((localBatch) => ({
        placement,
        workers,
        servers,
        localBatch,
        stepsPerSec: Math.exp(opts.noise * gaussian(random)) / law.stepTime(workers, servers, localBatch),
      }));
    });
    return { model: law.name, configurations, beyond: [] };
  });
  return { jobs };
}
