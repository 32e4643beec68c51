/**
 * The paper's evaluation: every policy on the same workload and seeds, figures averaged over seeds,
 * ratios against Optimus (`simulate --json`); the ablation is in `ablation.ts`.
 */
import type { PolicyOptions } from '../scheduling/registry';
import type { Policy } from '../scheduling/types';
import { simulate, type SimulationOptions, type SimulationResult } from './engine';
import type { Estimation, EstimationModels } from './estimator';
import type { MeasuredModel } from './measured-table';
import type { RunFigures } from './metrics';
import { jctBound } from './jct-bound';
import { makespanBound } from './makespan-bound';
import { defaultWorkers, runInWorkers, simulationOf, workersAvailable, type RunTask } from './run-pool';
import type { Trace } from './trace';

/** Where the workload of each seed comes from: a built-in generator or one fixed trace. */
export type WorkloadSource = (seed: number) => Trace;

export interface EvaluationOptions {
  readonly workload: string;
  readonly source: WorkloadSource;
  readonly seeds: number;
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  readonly models: EstimationModels;
  readonly getPolicy: (name: string, options?: PolicyOptions) => Policy;
  readonly intervalSec?: number;
  readonly restartPauseSec?: number;
  /** Relative noise of each logged speed (default: the simulator's, 5%). */
  readonly speedNoise?: number;
  /** See SimulationOptions.minRoundGapSec; default: 0 up to 500 jobs, 60 s above. */
  readonly minRoundGapSec?: number;
  /** Progress in runs: (done, total), done fractional while a run is under way. */
  readonly onRun?: (done: number, total: number) => void;
  /**
   * Worker threads for the runs (default: one per core); 1 runs them in this thread. Workers
   * rebuild the policies from `policyOptions` and the measured speeds from `measuredPath`.
   */
  readonly workers?: number;
  readonly policyOptions?: PolicyOptions;
  readonly measuredPath?: string;
  /** Sample shapes of each new job's pre-run (default: the runtime's). */
  readonly preRunBudget?: number;
}

/** A named configuration: a registered policy, its options and an estimation. */
export interface Variant {
  readonly name: string;
  readonly policy: string;
  readonly options?: PolicyOptions;
  readonly estimation: Estimation;
  /** What the variant changes, for reports. */
  readonly note?: string;
}

export interface VariantResult {
  readonly figures: RunFigures;
  /** Per seed, in seed order (1..n). */
  readonly perSeed: readonly RunFigures[];
  /** The run of the first seed, for plots. */
  readonly first: SimulationResult;
}

/**
 * The makespan bound (`makespan-bound.ts`) and the average-JCT bound (`jct-bound.ts`) of each
 * seed's workload, averaged like the figures.
 */
export interface BoundSummary {
  readonly makespanBound: number;
  readonly lastArrival: number;
  readonly jctBound: number;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);

function averageFigures(runs: readonly RunFigures[]): RunFigures {
  return {
    avgJct: mean(runs.map((r) => r.avgJct)),
    p95Jct: mean(runs.map((r) => r.p95Jct)),
    makespan: mean(runs.map((r) => r.makespan)),
    restarts: mean(runs.map((r) => r.restarts)),
    utilization: mean(runs.map((r) => r.utilization)),
    gpuUtilization: mean(runs.map((r) => r.gpuUtilization)),
    maxStartWait: mean(runs.map((r) => r.maxStartWait)),
    lateStarts: mean(runs.map((r) => r.lateStarts)),
  };
}

/** Runs every variant on seeds 1..n; seed s builds the workload of seed s and seeds the observation noise. */
export async function runVariants(
  o: EvaluationOptions,
  variants: readonly Variant[],
  extra: Partial<SimulationOptions> = {},
): Promise<Map<string, VariantResult>> {
  return (await runEvaluation(o, variants, extra)).results;
}

/** `runVariants` and the makespan bound of the same workloads. */
export async function runEvaluation(
  o: EvaluationOptions,
  variants: readonly Variant[],
  extra: Partial<SimulationOptions> = {},
): Promise<{ results: Map<string, VariantResult>; bound: BoundSummary; failed: Map<string, string> }> {
  const traces = Array.from({ length: o.seeds }, (_, i) => o.source(i + 1));
  const bounds = traces.map((t) => {
    const b = makespanBound(t, o.measured);
    return { makespanBound: b.bound, lastArrival: b.lastArrival, jctBound: jctBound(t, o.measured).bound };
  });
  const tasks: RunTask[] = traces.flatMap((trace, i) =>
    variants.map((v, j) => ({
      id: i * variants.length + j,
      trace,
      seed: i + 1,
      policy: v.policy,
      options: { ...o.policyOptions, ...v.options },
      estimation: v.estimation,
      ...(o.intervalSec === undefined ? {} : { intervalSec: o.intervalSec }),
      ...(o.restartPauseSec === undefined ? {} : { restartPauseSec: o.restartPauseSec }),
      ...(o.speedNoise === undefined ? {} : { speedNoise: o.speedNoise }),
      minRoundGapSec: o.minRoundGapSec ?? (trace.jobs.length > 500 ? 60 : 0),
      ...(i === 0 && extra.watchJob !== undefined ? { watchJob: extra.watchJob } : {}),
      ...(o.preRunBudget === undefined ? {} : { preRunBudget: o.preRunBudget }),
    })),
  );
  const settled = await Promise.allSettled(runTasks(o, variants, tasks));
  const runs = new Map<string, SimulationResult[]>(variants.map((v) => [v.name, []]));
  const failed = new Map<string, string>();
  for (const [k, r] of settled.entries()) {
    const task = tasks[k]!;
    const v = variants[task.id % variants.length]!;
    // A policy that stalls (runs nothing while work is left) is a result, not a crash: the
    // variant is reported as failed with the reason, the others still count.
    if (r.status === 'rejected') {
      if (!failed.has(v.name))
        failed.set(
          v.name,
          `seed ${task.seed}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`,
        );
    } else runs.get(v.name)?.push(r.value);
  }
  const out = new Map<string, VariantResult>();
  for (const [name, rs] of runs) {
    const first = rs[0];
    if (first && !failed.has(name)) out.set(name, { figures: averageFigures(rs), perSeed: rs, first });
  }
  const bound = {
    makespanBound: mean(bounds.map((b) => b.makespanBound)),
    lastArrival: mean(bounds.map((b) => b.lastArrival)),
    jctBound: mean(bounds.map((b) => b.jctBound)),
  };
  return { results: out, bound, failed };
}

/** The runs, on worker threads when there is more than one core to use, else one after another. */
function runTasks(
  o: EvaluationOptions,
  variants: readonly Variant[],
  tasks: readonly RunTask[],
): Promise<SimulationResult>[] {
  const progress = new Map<number, number>();
  const report = (): void =>
    o.onRun?.(
      [...progress.values()].reduce((a, b) => a + b, 0),
      tasks.length,
    );
  const workers = o.workers ?? defaultWorkers(tasks.length);
  if (workers > 1 && workersAvailable())
    return runInWorkers(tasks, {
      workers,
      ...(o.measuredPath === undefined ? {} : { measuredPath: o.measuredPath }),
      onProgress: (id, f) => {
        progress.set(id, f);
        report();
      },
    }).map((p, id) =>
      p.finally(() => {
        progress.set(id, 1);
        report();
      }),
    );
  // In this thread: strictly one after another, so a promise per run made lazily.
  let chain: Promise<unknown> = Promise.resolve();
  return tasks.map((t) => {
    const v = variants[t.id % variants.length]!;
    const run = chain.then(() =>
      simulate(
        simulationOf(t, {
          measured: o.measured,
          policy: o.getPolicy(v.policy, v.options),
          models: o.models,
          onProgress: (f) => {
            progress.set(t.id, f);
            report();
          },
        }),
      ).finally(() => {
        progress.set(t.id, 1);
        report();
      }),
    );
    chain = run.catch(() => undefined);
    return run;
  });
}

export const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

export function roundFigures(f: RunFigures): RunFigures {
  return {
    avgJct: round(f.avgJct, 1),
    p95Jct: round(f.p95Jct, 1),
    makespan: round(f.makespan, 1),
    restarts: round(f.restarts, 2),
    utilization: round(f.utilization, 4),
    gpuUtilization: round(f.gpuUtilization, 4),
    maxStartWait: round(f.maxStartWait, 1),
    lateStarts: round(f.lateStarts, 2),
  };
}

/** The `simulate --json` document. */
export type EstimationName = 'online' | 'oracle' | 'declared-epochs';

export interface ComparisonReport {
  readonly workload: string;
  readonly seeds: number;
  /** 'declared-epochs': online, except that jobs of fixed work declare their epochs (remaining work known). */
  readonly estimation: EstimationName;
  /** `--policy-option` pairs every policy was built with (empty: defaults). */
  readonly policyOptions: readonly string[];
  readonly policies: Record<string, RunFigures>;
  readonly ratios: Record<string, { jct: number; makespan: number }>;
  /**
   * Mean over seeds of the makespan no policy can beat (`makespan-bound.ts`) and of the last
   * arrival; `makespanOverBound` = each policy's makespan ÷ that bound.
   */
  readonly makespanBound: number;
  readonly lastArrival: number;
  readonly makespanOverBound: Record<string, number>;
  /**
   * Mean over seeds of the average JCT no policy can beat (`jct-bound.ts`: the larger of the jobs'
   * average shortest run and a one-machine SRPT relaxation per resource); `jctOverBound` = each
   * policy's average JCT ÷ that bound.
   */
  readonly jctBound: number;
  readonly jctOverBound: Record<string, number>;
  /** Policies whose run failed on some seed (e.g. stalled: nothing runs while work is left). */
  readonly failed: Record<string, string>;
  /** Per policy, on how many seeds its avg JCT was below Optimus's (a baseline that wins, wins). */
  readonly seedsBetterThanOptimus: Record<string, number>;
  /**
   * Per policy, the smallest and largest of its per-seed avg-JCT ratios to Optimus (each seed's
   * policy ÷ the same seed's Optimus): how far one seed's ratio is from the pooled one in `ratios`.
   */
  readonly jctRatioRange: Record<string, { min: number; max: number }>;
}

/**
 * Min and max over seeds of `policy avg JCT ÷ Optimus avg JCT` on the same seed, rounded like the
 * reports' ratios; null without pairs.
 */
export function perSeedRatioRange(
  perSeed: readonly RunFigures[],
  base: readonly RunFigures[],
): { min: number; max: number } | null {
  const ratios = perSeed.flatMap((f, i) => {
    const b = base[i]?.avgJct;
    return b !== undefined && b > 0 ? [f.avgJct / b] : [];
  });
  return ratios.length ? { min: round(Math.min(...ratios)), max: round(Math.max(...ratios)) } : null;
}

/** Figures per policy and ratios = policy ÷ Optimus (null-free: Optimus is always run). */
export function comparisonReport(
  o: {
    workload: string;
    seeds: number;
    estimation: EstimationName;
    policyOptions?: readonly string[];
    bound: BoundSummary;
    failed?: ReadonlyMap<string, string>;
  },
  results: ReadonlyMap<string, VariantResult>,
): ComparisonReport {
  const base = results.get('optimus')?.figures;
  const policies: Record<string, RunFigures> = {};
  const ratios: Record<string, { jct: number; makespan: number }> = {};
  const makespanOverBound: Record<string, number> = {};
  const jctOverBound: Record<string, number> = {};
  const seedsBetterThanOptimus: Record<string, number> = {};
  const jctRatioRange: Record<string, { min: number; max: number }> = {};
  const baseSeeds = results.get('optimus')?.perSeed ?? [];
  for (const [name, r] of results) {
    const range = perSeedRatioRange(r.perSeed, baseSeeds);
    if (range) jctRatioRange[name] = range;
    seedsBetterThanOptimus[name] = r.perSeed.filter(
      (f, i) => f.avgJct < (baseSeeds[i]?.avgJct ?? NaN),
    ).length;
    policies[name] = roundFigures(r.figures);
    makespanOverBound[name] = round(r.figures.makespan / o.bound.makespanBound);
    jctOverBound[name] = round(r.figures.avgJct / o.bound.jctBound);
    if (base) {
      ratios[name] = {
        jct: round(r.figures.avgJct / base.avgJct),
        makespan: round(r.figures.makespan / base.makespan),
      };
    }
  }
  return {
    workload: o.workload,
    seeds: o.seeds,
    estimation: o.estimation,
    policyOptions: o.policyOptions ?? [],
    policies,
    ratios,
    makespanBound: round(o.bound.makespanBound, 1),
    lastArrival: round(o.bound.lastArrival, 1),
    makespanOverBound,
    jctBound: round(o.bound.jctBound, 1),
    jctOverBound,
    failed: Object.fromEntries(o.failed ?? []),
    seedsBetterThanOptimus,
    jctRatioRange,
  };
}
