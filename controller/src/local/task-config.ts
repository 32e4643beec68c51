/** The emulated trainer's configuration for one task of a job at a shape. */
import type { JobShape, TaskPlacement } from '../scheduling/types';
import type { JobSpec } from '../runtime/job-spec';
import type { JobFiles } from './job-files';
import type { TrainerConfig } from './trainer/config';

/** Ground truth of jobs submitted without one (e.g. over the API, or the executor contract's jobs). */
export const DEFAULT_EMULATION = {
  theta: [0.002, 0.05, 0.03, 0.005, 0.01],
  beta: [0.002, 1, 0.1],
  lossNoise: 0.02,
  speedNoise: 0.03,
} as const;

export function trainerConfig(o: {
  spec: JobSpec;
  files: JobFiles;
  placement: TaskPlacement;
  shape: JobShape;
  /** The target generation the task is started for (it varies the emulation's noise per start). */
  generation: number;
  timeScale: number;
  restartCostSec: number;
  withSidecar: boolean;
  /** A start fault to emulate (tests), or null. */
  fault?: TrainerConfig['fault'];
}): TrainerConfig {
  const { spec, files, placement: p, shape } = o;
  const emu = spec.emulation ?? DEFAULT_EMULATION;
  return {
    role: p.role,
    index: p.index,
    ps: shape.ps,
    workers: shape.workers,
    mode: spec.mode,
    batchSize: spec.batchSize,
    stepsPerEpoch: spec.stepsPerEpoch,
    theta: [...emu.theta],
    beta: [...emu.beta],
    lossNoise: emu.lossNoise,
    speedNoise: emu.speedNoise,
    threshold: spec.convergence.threshold,
    patience: spec.convergence.patience,
    maxEpochs: spec.maxEpochs,
    timeScale: o.timeScale,
    restartCostSec: o.restartCostSec,
    // About eight Speedometer lines per epoch, like MXNet's `frequent` on a real data set.
    frequent: Math.max(1, Math.round(spec.stepsPerEpoch / 8)),
    logPath: files.log(p.index),
    checkpointPath: files.checkpoint,
    doneMarker: p.role === 'worker' && o.withSidecar ? files.doneMarker(p.index) : null,
    parentPid: process.pid,
    seed: (o.generation * 1000 + p.index * 7 + spec.name.length) | 0,
    fault: o.fault ?? null,
  };
}
