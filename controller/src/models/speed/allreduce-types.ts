/**
 * Contracts of the all-reduce speed model (workers only, no PS: PyTorch DDP, Horovod, torchrun).
 * Units: a job's speed is its **synchronous steps per second** (one step = one all-reduce = one
 * global batch), as the runtime measures it for the whole job; samples/s = steps/s × global batch.
 */
import type { SpeedPrediction } from './types';

/** One observation: the job ran `workers` workers spread over `servers` servers at `stepsPerSec`. */
export interface AllReduceSample {
  readonly workers: number;
  /** Distinct servers the workers run on (1 ≤ servers ≤ workers); see `serversSpanned`. */
  readonly servers: number;
  /** Whole-job synchronous steps per second. */
  readonly stepsPerSec: number;
  /**
   * Samples each worker computes per step. Default: the fit's `globalBatch / workers` (the global
   * batch preserved across resizes, the training contract); give it when the batch per worker is
   * fixed instead (Pollux's measurements vary it freely).
   */
  readonly localBatch?: number | undefined;
  /** Relative confidence of this sample, default 1 (e.g. the number of steps it averages). */
  readonly weight?: number | undefined;
}

export interface AllReduceFitOptions {
  /**
   * Global batch of one step, when known. Unknown: the per-worker batch is taken as 1/workers,
   * which is proportional to the truth, so the fitted coefficients absorb the constant.
   */
  readonly globalBatch?: number | undefined;
}

/** A fitted all-reduce model: pure, cheap to call, safe for any valid shape. */
export interface AllReduceSpeedModel {
  /**
   * Steps/s of the job at `workers` workers on `servers` servers (1 ≤ servers ≤ workers; reals
   * allowed). `localBatch` defaults as in {@link AllReduceSample.localBatch}.
   */
  predict(workers: number, servers: number, localBatch?: number): SpeedPrediction;
  /** Coefficients of the law by term name (see `allreduce-law.ts`), for inspection and `--json`. */
  readonly coefficients: Readonly<Record<string, number>>;
  /** Log-scale spread behind the 90% interval (leave-one-out when samples allow). */
  readonly logSpread: number;
  /** Indices of samples dropped as outliers. */
  readonly dropped: readonly number[];
}
