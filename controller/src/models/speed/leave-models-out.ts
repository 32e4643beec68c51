/**
 * The leave-models-out protocol of `eval speed`: the speed model's tunable part (the residual
 * kernel, `residual-kernel.ts`) was chosen with the evaluation CSV in view, so the default
 * protocol's figure may flatter it. Here each model of the CSV is held out in turn; the kernel
 * setting is chosen from a grid by the pooled median error on the OTHER models only, and the
 * held-out model is scored with that choice. The figure is pooled over the held-out scores.
 *
 * Cost: every grid setting is evaluated once per model (the per-fold choice reuses those errors).
 */
import { fitSpeedModel } from './best-model';
import type { MeasuredData } from './measured-data';
import { DEFAULT_RESIDUAL_KERNEL, type ResidualKernelOptions } from './residual-kernel';
import { quantile } from './samples';
import { evalJob, summary, type ErrorSummary, type JobErrors, type SpeedEvalOptions } from './speed-eval';

export type KernelSetting = ResidualKernelOptions | false;

/** The settings a fold chooses from: the default, shorter/longer PS lengths, more/less shrinkage, none. */
export const KERNEL_GRID: readonly KernelSetting[] = [
  ...[0.15, 0.3, 0.6].flatMap((psLength) =>
    [0.25, 0.5, 1].map((shrinkage) => ({ ...DEFAULT_RESIDUAL_KERNEL, psLength, shrinkage })),
  ),
  false,
];

export const settingName = (k: KernelSetting): string =>
  k === false
    ? 'no kernel'
    : `psLength ${k.psLength}, workersLength ${k.workersLength}, shrinkage ${k.shrinkage}`;

export interface HeldOutModel extends ErrorSummary {
  /** The setting the other models chose. */
  readonly chosen: string;
  readonly baseline: ErrorSummary;
}

export interface LeaveModelsOutResult extends ErrorSummary {
  readonly samples: number;
  readonly seeds: number;
  readonly grid: readonly string[];
  readonly models: Record<string, HeldOutModel>;
  readonly baseline: ErrorSummary;
  readonly skippedModels: readonly string[];
}

export function leaveModelsOut(
  data: MeasuredData,
  opts: Omit<SpeedEvalOptions, 'fit'> & { readonly grid?: readonly KernelSetting[] },
): LeaveModelsOutResult {
  const grid = opts.grid ?? KERNEL_GRID;
  const jobs = data.jobs
    .map((job, index) => ({ job, index }))
    .filter(({ job }) => job.shapes.length > opts.samples);
  const skippedModels = data.jobs.filter((j) => j.shapes.length <= opts.samples).map((j) => j.model);
  if (jobs.length < 2)
    throw new RangeError('leave-models-out needs at least two models with more than k shapes');
  // errors[g][j]: the errors of job j under grid setting g.
  const errors: JobErrors[][] = grid.map((kernel) =>
    jobs.map(({ job, index }) =>
      evalJob(job, index, { ...opts, fit: (s, o) => fitSpeedModel(s, { ...o, residualKernel: kernel }) }),
    ),
  );
  const models: Record<string, HeldOutModel> = {};
  const ours: number[] = [];
  const paper: number[] = [];
  jobs.forEach(({ job }, held) => {
    let best = 0;
    let bestMedian = Infinity;
    grid.forEach((_, g) => {
      const pooled = (errors[g] ?? []).flatMap((e, j) => (j === held ? [] : e.ours));
      const m = quantile(pooled, 0.5);
      if (m < bestMedian) {
        bestMedian = m;
        best = g;
      }
    });
    const scored = errors[best]?.[held];
    if (!scored) return;
    models[job.model] = {
      ...summary(scored.ours),
      chosen: settingName(grid[best] ?? false),
      baseline: summary(scored.paper),
    };
    ours.push(...scored.ours);
    paper.push(...scored.paper);
  });
  return {
    samples: opts.samples,
    seeds: opts.seeds,
    grid: grid.map(settingName),
    models,
    ...summary(ours),
    baseline: summary(paper),
    skippedModels,
  };
}
