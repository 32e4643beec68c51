/**
 * Ground-truth speed of a job at any shape (hidden from the scheduler), in steps per second:
 * sync = global steps/s, async = sum of the workers' steps/s (the convention of models/speed).
 */
import type { TrainingMode } from '../models/speed/types';
import { asyncCommShare, syncCommShare } from './locality';
import type { MeasuredModel } from './measured-table';
import type { SpeedTruth } from './trace';

export type TrueSpeed = (ps: number, workers: number) => number;

/** A job's true speed at a shape (spread placement) and the communication share of its step time. */
export interface TrueSpeedModel {
  readonly speed: TrueSpeed;
  /** 0..1: how much of the step a fully local placement could shorten (see locality.ts). */
  readonly commShare: (ps: number, workers: number) => number;
}

/** Everything needed to resolve a job's speed truth. */
export interface SpeedTruthInput {
  readonly speed: SpeedTruth;
  readonly mode: TrainingMode;
  readonly globalBatch: number;
}

/**
 * Async from sync measurements: an async worker at (p, w) does what a sync worker does, except that it
 * processes the whole batch M instead of M/w and waits for no barrier. Its step time is therefore the
 * measured sync step time plus the compute time of the extra M − M/w samples (θ0 per sample from the
 * Eq. 4 fit), and the job's speed is w workers' worth of such steps.
 */
function asyncFromMeasured(m: MeasuredModel, batch: number, sync: TrueSpeed): TrueSpeed {
  const perSample = m.theta[0];
  return (p, w) => {
    const syncStep = 1 / sync(p, w);
    return w / (syncStep + perSample * (batch - batch / w));
  };
}

function parametric(theta: readonly number[], mode: TrainingMode, batch: number): TrueSpeed {
  const t = (i: number): number => theta[i] ?? 0;
  if (mode === 'sync')
    return (p, w) => 1 / (t(0) * (batch / w) + t(1) + (t(2) * w) / p + t(3) * w + t(4) * p);
  return (p, w) => w / (t(0) + (t(1) * w) / p + t(2) * w + t(3) * p);
}

/** Resolves a trace job's speed truth; throws when a measured model is unknown. */
export function resolveSpeed(
  input: SpeedTruthInput,
  measured: ReadonlyMap<string, MeasuredModel>,
): TrueSpeedModel {
  const { speed: truth, mode, globalBatch } = input;
  if (truth.kind === 'parametric') {
    const theta = truth.theta;
    const commShare =
      mode === 'sync'
        ? (p: number, w: number) => syncCommShare(theta, globalBatch, p, w)
        : (p: number, w: number) => asyncCommShare(theta, p, w);
    return { speed: parametric(theta, mode, globalBatch), commShare };
  }
  const m = measured.get(truth.model);
  if (!m) throw new Error(`no measurements for model "${truth.model}" in the measured-speeds table`);
  const sync: TrueSpeed = {
    table: (p: number, w: number) => m.syncSpeed(p, w),
    'table+rbf': (p: number, w: number) => m.extrapolatedSpeed(p, w),
    rbf: (p: number, w: number) => m.rbfSpeed(p, w),
  }[truth.interpolation ?? 'table'];
  return {
    speed: mode === 'sync' ? sync : asyncFromMeasured(m, m.globalBatch, sync),
    // Async: θ0·M per step instead of θ0·M/w; expressed through syncCommShare with batch M·w.
    commShare:
      mode === 'sync'
        ? (p, w) => syncCommShare(m.theta, m.globalBatch, p, w)
        : (p, w) => syncCommShare(m.theta, m.globalBatch * w, p, w),
  };
}
