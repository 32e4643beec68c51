/**
 * Trials shared by the tests of the estimator's candidate curves (exponential, late start): each
 * candidate is judged against the estimator without it, on noisy replicates of a curve, and on 1/k
 * curves that `eval convergence` does not use, where it must change nothing.
 */
import { estimateConvergence, type EstimateOptions } from './estimate';
import { eq1Curve, observe, seededRandom, trueTotalSteps, type NoiseSpec, type Scenario } from './synthetic';
import type { ConvergenceEstimate } from './types';

const SPE = 100;

/** A held-out 1/k curve: Eq. 1 parameters and a threshold the standard scenarios do not use. */
export const inverseCurve = (
  b: { b0: number; b1: number; b2: number },
  threshold: number,
  noise: NoiseSpec,
): Scenario => ({
  name: 'inverse',
  paperForm: true,
  curve: eq1Curve(b, SPE),
  rule: { stepsPerEpoch: SPE, threshold, patience: 3 },
  pointsPerEpoch: 8,
  noise,
});

/** Two held-out 1/k curves on which a candidate must leave every estimate as it was. */
export const heldOutInverseCurves = (noise: NoiseSpec): Scenario[] => [
  inverseCurve({ b0: 0.21, b1: 1.07, b2: 0.07 }, 0.01, noise),
  inverseCurve({ b0: 0.12, b1: 1.2, b2: 0.2 }, 0.005, noise),
];

export const mean = (xs: readonly number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;

/**
 * Relative errors at `progress` over seeds 1..`seeds`, with the default options and with `without`
 * (replicates where either abstains are skipped); `marked` counts the estimates `mark` accepts.
 */
export function compareAt(
  s: Scenario,
  o: {
    progress: number;
    seeds: number;
    without: EstimateOptions;
    mark: (e: Extract<ConvergenceEstimate, { status: 'ok' }>) => boolean;
  },
): { withIt: number[]; withoutIt: number[]; marked: number } {
  const truth = trueTotalSteps(s.curve, s.rule) ?? NaN;
  const relErr = (predicted: number): number => Math.abs(predicted - truth) / truth;
  const out = { withIt: [] as number[], withoutIt: [] as number[], marked: 0 };
  for (let seed = 1; seed <= o.seeds; seed++) {
    const points = observe(s, o.progress * truth, seededRandom(seed));
    const a = estimateConvergence(points, s.rule);
    const b = estimateConvergence(points, s.rule, o.without);
    if (a.status !== 'ok' || b.status !== 'ok') continue;
    out.withIt.push(relErr(a.predictedTotalSteps));
    out.withoutIt.push(relErr(b.predictedTotalSteps));
    if (o.mark(a)) out.marked++;
  }
  return out;
}

/** Pairs of estimates (default options, `without`) at 25/50/75% progress on seeds 1..15 of each curve. */
export function* estimatePairs(
  curves: readonly Scenario[],
  without: EstimateOptions,
): Generator<[ConvergenceEstimate, ConvergenceEstimate]> {
  for (const s of curves) {
    const truth = trueTotalSteps(s.curve, s.rule) ?? NaN;
    for (const progress of [0.25, 0.5, 0.75])
      for (let seed = 1; seed <= 15; seed++) {
        const points = observe(s, progress * truth, seededRandom(seed));
        yield [estimateConvergence(points, s.rule), estimateConvergence(points, s.rule, without)];
      }
  }
}
