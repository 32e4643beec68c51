/**
 * The convergence benchmark behind `eval convergence`: for every scenario and replicate, observe a noisy
 * curve up to 25/50/75% of its true total, predict, and compare with the truth (the rule on the noiseless
 * curve). Pure and deterministic for a given seed.
 */
import { estimateConvergence } from './estimate';
import type { EstimateOptions } from './estimate';
import { fitEq1Paper } from './fit-paper';
import { comparePaired, type PairedComparison } from './paired';
import { predictEpoch } from './predict-epoch';
import { priorRemaining, SIM_PRIOR_EPOCHS } from './prior';
import { cleanPoints, epochMeans, normalise, replaceOutliers } from './preprocess';
import { observe, seededRandom, trueTotalSteps } from './synthetic';
import type { CurveFamily, Scenario } from './synthetic';
import type { ConvergenceRule, LossPoint } from './types';

export const PROGRESS_LEVELS = [0.25, 0.5, 0.75] as const;

export interface ProgressFigures {
  /** Median of |predicted − true| / true over the fits that returned a prediction. */
  readonly medianError: number | null;
  /** 90th percentile of the same errors. */
  readonly p90Error: number | null;
  /** Share of fits whose interval contains the truth. */
  readonly coverage: number | null;
  /** Median of (upper − lower) / true total: how wide the intervals are. */
  readonly medianRelativeWidth: number | null;
  /** Share of fits that answered "insufficient data". */
  readonly insufficientRate: number;
  /** The paper's procedure (transform fit, no drop detection, no weighting) on the same points. */
  readonly baselineMedianError: number | null;
  readonly baselineP90Error: number | null;
}

export interface ScenarioFigures {
  readonly paperForm: boolean;
  readonly rule: Scenario['rule'];
  readonly pointsPerEpoch: number;
  readonly noise: Scenario['noise'];
  readonly trueTotalSteps: number;
  readonly byProgress: Record<string, ProgressFigures>;
  readonly coverage: number | null;
}

interface Outcome {
  readonly error: number | null;
  readonly width: number | null;
  readonly covered: boolean | null;
  readonly baselineError: number | null;
  /** Errors with an abstention answered by the fallback (`fallbackTotalSteps`). */
  readonly scoredError: number;
  readonly baselineScoredError: number;
}

/**
 * What a scheduler is told when a procedure abstains: the runtime's prior for a simulated job (half of
 * what its 40-epoch bound leaves, `prior.ts`). Scoring abstentions with it, rather than leaving them
 * out, charges a procedure for every fit it could not make.
 */
export function fallbackTotalSteps(done: number, rule: ConvergenceRule): number {
  return done + priorRemaining(2 * SIM_PRIOR_EPOCHS * rule.stepsPerEpoch, done).steps;
}

/** Quantile by linear interpolation between order statistics; null for no values. */
function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  return (s[lo] ?? 0) + ((s[Math.ceil(pos)] ?? 0) - (s[lo] ?? 0)) * (pos - lo);
}

const median = (values: number[]): number | null => quantile(values, 0.5);

function share(flags: boolean[]): number | null {
  return flags.length === 0 ? null : flags.filter(Boolean).length / flags.length;
}

/** The paper's procedure, as a baseline: outliers, normalisation, transform-NNLS fit of all points. */
function paperPrediction(points: readonly LossPoint[], scenario: Scenario): number | null {
  const norm = normalise(replaceOutliers(cleanPoints(points), scenario.rule.stepsPerEpoch)).points;
  if (norm.length < 3) return null;
  const data = { x: norm.map((p) => p.step), y: norm.map((p) => p.loss), w: norm.map(() => 1) };
  const { beta } = fitEq1Paper(data);
  const observed = epochMeans(norm, scenario.rule.stepsPerEpoch);
  const e = predictEpoch(beta, {
    rule: scenario.rule,
    segmentStart: 0,
    observed: (epoch) => observed[epoch] ?? NaN,
    maxEpoch: 1e6,
  });
  return e === null ? null : (e + 1) * scenario.rule.stepsPerEpoch;
}

function runOne(
  scenario: Scenario,
  truth: number,
  done: number,
  points: LossPoint[],
  options: EstimateOptions,
): Outcome {
  const est = estimateConvergence(points, scenario.rule, options);
  const base = paperPrediction(points, scenario);
  const err = (predicted: number) => Math.abs(predicted - truth) / truth;
  const fallback = err(fallbackTotalSteps(done, scenario.rule));
  const baselineError = base === null ? null : err(base);
  const baselineScoredError = baselineError ?? fallback;
  if (est.status !== 'ok') {
    return {
      error: null,
      width: null,
      covered: null,
      baselineError,
      scoredError: fallback,
      baselineScoredError,
    };
  }
  const error = err(est.predictedTotalSteps);
  return {
    error,
    width: (est.upper - est.lower) / truth,
    covered: est.lower <= truth && truth <= est.upper,
    baselineError,
    scoredError: error,
    baselineScoredError,
  };
}

/** One procedure at one progress level of one curve family, abstentions scored by the fallback. */
export interface ProcedureFigures {
  readonly medianError: number | null;
  /** Mean |error|: errors are multiples of 1/epochs, so medians of pooled fits often tie. */
  readonly meanError: number | null;
  readonly p90Error: number | null;
  /** Share of fits where the procedure gave no prediction (then the fallback answered). */
  readonly abstentions: number;
}

/** Ours and the paper's procedure side by side on the same points. */
export interface FamilyFigures {
  readonly fits: number;
  readonly ours: ProcedureFigures;
  readonly paper: ProcedureFigures;
  /** Fit by fit on the same points (abstentions scored): which is closer, and a sign test. */
  readonly paired: PairedComparison;
}

function procedure(errors: number[], abstained: number, n: number): ProcedureFigures {
  const meanError = errors.length ? errors.reduce((a, b) => a + b, 0) / errors.length : null;
  return {
    medianError: median(errors),
    meanError,
    p90Error: quantile(errors, 0.9),
    abstentions: n ? abstained / n : 0,
  };
}

function sideBySide(outcomes: readonly Outcome[]): FamilyFigures {
  const n = outcomes.length;
  return {
    fits: n,
    ours: procedure(
      outcomes.map((o) => o.scoredError),
      outcomes.filter((o) => o.error === null).length,
      n,
    ),
    paper: procedure(
      outcomes.map((o) => o.baselineScoredError),
      outcomes.filter((o) => o.baselineError === null).length,
      n,
    ),
    paired: comparePaired(outcomes.map((o) => [o.scoredError, o.baselineScoredError] as const)),
  };
}

function summarise(outcomes: Outcome[]): ProgressFigures {
  const ok = outcomes.filter((o) => o.error !== null);
  const errors = ok.map((o) => o.error ?? 0);
  const baseline = outcomes.flatMap((o) => (o.baselineError === null ? [] : [o.baselineError]));
  return {
    medianError: median(errors),
    p90Error: quantile(errors, 0.9),
    coverage: share(ok.map((o) => o.covered === true)),
    medianRelativeWidth: median(ok.map((o) => o.width ?? 0)),
    insufficientRate: outcomes.length === 0 ? 0 : 1 - ok.length / outcomes.length,
    baselineMedianError: median(baseline),
    baselineP90Error: quantile(baseline, 0.9),
  };
}

export interface BenchmarkResult {
  readonly seed: number;
  readonly replicates: number;
  /** Pooled over the paper-form scenarios (Eq. 1 curves without a drop). */
  readonly paperForm: Record<string, ProgressFigures>;
  /** Pooled over all scenarios. */
  readonly overall: Record<string, ProgressFigures>;
  readonly coverage: number | null;
  readonly scenarios: Record<string, ScenarioFigures>;
  /** Per curve family and progress level: ours vs the paper's procedure, abstentions scored. */
  readonly families: Record<string, Record<string, FamilyFigures>>;
}

const familyOf = (s: Scenario): CurveFamily => s.family ?? (s.paperForm ? 'inverse' : 'power-law');

/** Runs the benchmark; `replicates` noisy copies of every scenario, seeded from `seed`. */
export function runConvergenceBenchmark(
  scenarios: readonly Scenario[],
  opts: { seed: number; replicates: number; estimate?: EstimateOptions },
): BenchmarkResult {
  const pooled = new Map<string, { all: Outcome[]; paper: Outcome[] }>();
  for (const p of PROGRESS_LEVELS) pooled.set(String(p), { all: [], paper: [] });
  const scenarioFigures: Record<string, ScenarioFigures> = {};
  const byFamily = new Map<string, Map<string, Outcome[]>>();
  scenarios.forEach((scenario, index) => {
    const truth = trueTotalSteps(scenario.curve, scenario.rule);
    if (truth === null) throw new Error(`scenario ${scenario.name} never converges`);
    const byProgress: Record<string, ProgressFigures> = {};
    const allOutcomes: Outcome[] = [];
    for (const p of PROGRESS_LEVELS) {
      const outcomes: Outcome[] = [];
      for (let r = 0; r < opts.replicates; r++) {
        const random = seededRandom(opts.seed * 1_000_003 + index * 7919 + r);
        const done = p * truth;
        outcomes.push(runOne(scenario, truth, done, observe(scenario, done, random), opts.estimate ?? {}));
      }
      const family = byFamily.get(familyOf(scenario)) ?? new Map<string, Outcome[]>();
      family.set(String(p), [...(family.get(String(p)) ?? []), ...outcomes]);
      byFamily.set(familyOf(scenario), family);
      byProgress[String(p)] = summarise(outcomes);
      allOutcomes.push(...outcomes);
      const pool = pooled.get(String(p));
      pool?.all.push(...outcomes);
      if (scenario.paperForm) pool?.paper.push(...outcomes);
    }
    const coverage = summarise(allOutcomes).coverage;
    const { paperForm, rule, pointsPerEpoch, noise } = scenario;
    scenarioFigures[scenario.name] = {
      paperForm,
      rule,
      pointsPerEpoch,
      noise,
      trueTotalSteps: truth,
      byProgress,
      coverage,
    };
  });
  const pick = (key: 'all' | 'paper'): Record<string, ProgressFigures> =>
    Object.fromEntries([...pooled].map(([p, v]) => [p, summarise(v[key])]));
  const everything = [...pooled.values()].flatMap((v) => v.all);
  return {
    seed: opts.seed,
    replicates: opts.replicates,
    paperForm: pick('paper'),
    overall: pick('all'),
    coverage: summarise(everything).coverage,
    scenarios: scenarioFigures,
    families: Object.fromEntries(
      [...byFamily].map(([f, levels]) => [
        f,
        Object.fromEntries([...levels].map(([p, os]) => [p, sideBySide(os)])),
      ]),
    ),
  };
}
