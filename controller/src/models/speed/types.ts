/** Contracts of the resource→speed model (paper §3.2). Pure data and functions. */

export type TrainingMode = 'sync' | 'async';

/** One observation: the job ran at (ps, workers) and made `stepsPerSec` steps per second. */
export interface SpeedSample {
  readonly ps: number;
  readonly workers: number;
  /** Job speed in steps per second (sync: global steps; async: sum over workers). */
  readonly stepsPerSec: number;
  /** Relative confidence of this sample, default 1 (e.g. number of steps it averages). */
  readonly weight?: number;
}

/** A point prediction with an interval (same units). */
export interface SpeedPrediction {
  readonly stepsPerSec: number;
  readonly lower: number;
  readonly upper: number;
}

/** A fitted model: pure, cheap to call, safe to call for any positive shape. */
export interface SpeedModel {
  predict(ps: number, workers: number): SpeedPrediction;
}
