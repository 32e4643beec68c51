/**
 * The pure core the runtime drives, passed in rather than imported so the runtime can be
 * tested with small fakes and every backend wires the same real implementations
 * (see `default-core.ts`).
 */
import type { ConvergenceEstimate, ConvergenceRule, LossPoint } from '../models/convergence/types';
import type { SpeedModel, SpeedSample, TrainingMode } from '../models/speed/types';
import type { Plan } from '../planning/types';
import type { Decision, JobShape, Policy, RemainingWork, TaskPlacement } from '../scheduling/types';

export interface CurrentJob {
  readonly shape: JobShape;
  readonly placement: readonly TaskPlacement[];
}

/**
 * Models of a job that come from somewhere other than its observations: the simulator's oracle
 * (`--oracle`) plugs in here, where the fitted models would come from. Null: fit them.
 */
export interface ModelSource {
  of(
    jobId: string,
    stepsDone: number,
  ): { readonly remaining?: RemainingWork; readonly speed?: SpeedModel } | null;
}

export interface Core {
  readonly policy: Policy;
  /** Optional: known models that replace the fitted ones (see {@link ModelSource}). */
  readonly models?: ModelSource;
  estimateConvergence(points: readonly LossPoint[], rule: ConvergenceRule): ConvergenceEstimate;
  /** Fits the speed model; null when the samples cannot support a fit yet. */
  fitSpeed(
    samples: readonly SpeedSample[],
    opts: { mode: TrainingMode; globalBatch: number },
  ): SpeedModel | null;
  /** The pre-run shapes for a new job (paper §3.2: a handful of short runs). */
  sampleShapes(opts: {
    budget: number;
    maxPs: number;
    maxWorkers: number;
    mode: TrainingMode;
    seed: number;
  }): JobShape[];
  /** Plan = diff(current, decided). `current` has every job the decision may mention. */
  plan(current: ReadonlyMap<string, CurrentJob | null>, decision: Decision): Plan;
}
