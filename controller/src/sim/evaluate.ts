/**
 * The paper's evaluation: every policy on the same workload and seeds, figures averaged over seeds,
 * ratios against Optimus (`simulate --json`), and the ablation of Fig. 15 (`simulate --ablation`).
 */
import type { Policy } from '../scheduling/types';
import { simulate, type SimulationOptions, type SimulationResult } from './engine';
import type { Estimation, EstimationModels } from './estimator';
import type { MeasuredModel } from './measured-table';
import type { RunFigures } from './metrics';
import type { Trace } from './trace';

/** Where the workload of each seed comes from: a built-in generator or one fixed trace. */
export type WorkloadSource = (seed: number) => Trace;

export interface EvaluationOptions {
  readonly workload: string;
  readonly source: WorkloadSource;
  readonly seeds: number;
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  readonly models: EstimationModels;
  readonly getPolicy: (name: string) => Policy;
  readonly intervalSec?: number;
  readonly restartPauseSec?: number;
  /** See SimulationOptions.minRoundGapSec; default: 0 up to 500 jobs, 60 s above. */
  readonly minRoundGapSec?: number;
  /** Progress in runs: (done, total), done fractional while a run is under way. */
  readonly onRun?: (done: number, total: number) => void;
}

/** A named configuration: a policy and an estimation. */
export interface Variant {
  readonly name: string;
  readonly policy: string;
  readonly estimation: Estimation;
}

export interface VariantResult {
  readonly figures: RunFigures;
  /** The run of the first seed, for plots. */
  readonly first: SimulationResult;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);

function averageFigures(runs: readonly RunFigures[]): RunFigures {
  return {
    avgJct: mean(runs.map((r) => r.avgJct)),
    p95Jct: mean(runs.map((r) => r.p95Jct)),
    makespan: mean(runs.map((r) => r.makespan)),
    restarts: mean(runs.map((r) => r.restarts)),
    utilization: mean(runs.map((r) => r.utilization)),
  };
}

/** Runs every variant on seeds 1..n; seed s builds the workload of seed s and seeds the observation noise. */
export async function runVariants(
  o: EvaluationOptions,
  variants: readonly Variant[],
  extra: Partial<SimulationOptions> = {},
): Promise<Map<string, VariantResult>> {
  const total = variants.length * o.seeds;
  let done = 0;
  const runs = new Map<string, SimulationResult[]>(variants.map((v) => [v.name, []]));
  for (let seed = 1; seed <= o.seeds; seed++) {
    const trace = o.source(seed);
    for (const v of variants) {
      const result = await simulate({
        trace,
        measured: o.measured,
        policy: o.getPolicy(v.policy),
        estimation: v.estimation,
        models: o.models,
        seed,
        ...(o.intervalSec === undefined ? {} : { intervalSec: o.intervalSec }),
        ...(o.restartPauseSec === undefined ? {} : { restartPauseSec: o.restartPauseSec }),
        minRoundGapSec: o.minRoundGapSec ?? (trace.jobs.length > 500 ? 60 : 0),
        // Within a long run, the bar moves with the fraction of jobs finished.
        onProgress: (f) => o.onRun?.(done + f, total),
        ...(seed === 1 ? extra : {}),
      });
      runs.get(v.name)?.push(result);
      o.onRun?.(++done, total);
    }
  }
  const out = new Map<string, VariantResult>();
  for (const [name, rs] of runs) {
    const first = rs[0];
    if (first) out.set(name, { figures: averageFigures(rs), first });
  }
  return out;
}

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

function roundFigures(f: RunFigures): RunFigures {
  return {
    avgJct: round(f.avgJct, 1),
    p95Jct: round(f.p95Jct, 1),
    makespan: round(f.makespan, 1),
    restarts: round(f.restarts, 2),
    utilization: round(f.utilization, 4),
  };
}

/** The `simulate --json` document. */
export interface ComparisonReport {
  readonly workload: string;
  readonly seeds: number;
  readonly estimation: 'online' | 'oracle';
  readonly policies: Record<string, RunFigures>;
  readonly ratios: Record<string, { jct: number; makespan: number }>;
}

/** Figures per policy and ratios = policy ÷ Optimus (null-free: Optimus is always run). */
export function comparisonReport(
  o: { workload: string; seeds: number; estimation: 'online' | 'oracle' },
  results: ReadonlyMap<string, VariantResult>,
): ComparisonReport {
  const base = results.get('optimus')?.figures;
  const policies: Record<string, RunFigures> = {};
  const ratios: Record<string, { jct: number; makespan: number }> = {};
  for (const [name, r] of results) {
    policies[name] = roundFigures(r.figures);
    if (base) {
      ratios[name] = {
        jct: round(r.figures.avgJct / base.avgJct),
        makespan: round(r.figures.makespan / base.makespan),
      };
    }
  }
  return { workload: o.workload, seeds: o.seeds, estimation: o.estimation, policies, ratios };
}

/** The variants of the ablation (paper Fig. 15 and §6.3). */
export const ABLATION_VARIANTS: readonly Variant[] = [
  { name: 'optimus', policy: 'optimus', estimation: { kind: 'online' } },
  { name: 'optimus-allocation-only', policy: 'optimus-allocation-only', estimation: { kind: 'online' } },
  { name: 'optimus-placement-only', policy: 'optimus-placement-only', estimation: { kind: 'online' } },
  { name: 'drf', policy: 'drf', estimation: { kind: 'online' } },
  { name: 'optimus-oracle', policy: 'optimus', estimation: { kind: 'oracle', error: 0 } },
  { name: 'optimus-error-10', policy: 'optimus', estimation: { kind: 'oracle', error: 0.1 } },
  { name: 'optimus-error-20', policy: 'optimus', estimation: { kind: 'oracle', error: 0.2 } },
  { name: 'optimus-error-30', policy: 'optimus', estimation: { kind: 'oracle', error: 0.3 } },
];

/** The `simulate --ablation --json` document. */
export interface AblationReport {
  readonly workload: string;
  readonly seeds: number;
  readonly variants: Record<string, RunFigures & { jctVsDrf: number; jctVsOracle: number }>;
}

/** jctVsDrf = DRF's JCT ÷ the variant's (paper: allocation alone 1.62, placement alone 1.17). */
export function ablationReport(
  o: { workload: string; seeds: number },
  results: ReadonlyMap<string, VariantResult>,
): AblationReport {
  const drf = results.get('drf')?.figures.avgJct ?? NaN;
  const oracle = results.get('optimus-oracle')?.figures.avgJct ?? NaN;
  const variants: AblationReport['variants'] = {};
  for (const [name, r] of results) {
    variants[name] = {
      ...roundFigures(r.figures),
      jctVsDrf: round(drf / r.figures.avgJct),
      jctVsOracle: round(r.figures.avgJct / oracle),
    };
  }
  return { workload: o.workload, seeds: o.seeds, variants };
}
