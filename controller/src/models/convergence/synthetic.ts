/**
 * Synthetic loss curves with a known convergence point, for `eval convergence` and the simulator.
 * Everything is driven by a seeded PRNG, so a seed reproduces a curve exactly.
 */
import { gaussian, seededRandom } from '../random';
import { convergedEpochOf } from './rule';
import type { ConvergenceRule, LossPoint } from './types';

// The project's one seeded PRNG and Gaussian helper, re-exported for the curves' callers.
export { gaussian, seededRandom };

/** A noiseless loss curve: loss as a function of the global step. */
export type TrueCurve = (step: number) => number;

/** Eq. 1 with coefficients per EPOCH (k/stepsPerEpoch), as the paper quotes them (Seq2Seq: 0.21, 1.07, 0.07). */
export function eq1Curve(b: { b0: number; b1: number; b2: number }, stepsPerEpoch: number): TrueCurve {
  return (step) => 1 / ((b.b0 * step) / stepsPerEpoch + b.b1) + b.b2;
}

/** A power law a·(1 + epoch/τ)^(−p) + c: with p < 1 it decays slower than Eq. 1 can describe. */
export function powerCurve(
  c: { a: number; tau: number; p: number; floor: number },
  stepsPerEpoch: number,
): TrueCurve {
  return (step) => c.a * (1 + step / stepsPerEpoch / c.tau) ** -c.p + c.floor;
}

/** An exponential decay a·exp(−epoch/τ) + c: faster than Eq. 1. */
export function expCurve(c: { a: number; tau: number; floor: number }, stepsPerEpoch: number): TrueCurve {
  return (step) => c.a * Math.exp(-step / stepsPerEpoch / c.tau) + c.floor;
}

/**
 * A slow start: Eq. 1 of warped time g(e) = e²/(2P) before P epochs, e − P/2 after (flat at first,
 * then the usual decay) — warm-up, or a model that takes a while to find its way.
 */
export function plateauCurve(
  b: { b0: number; b1: number; b2: number },
  plateauEpochs: number,
  stepsPerEpoch: number,
): TrueCurve {
  const p = plateauEpochs;
  return (step) => {
    const e = step / stepsPerEpoch;
    const g = e < p ? (e * e) / (2 * p) : e - p / 2;
    return 1 / (b.b0 * g + b.b1) + b.b2;
  };
}

/**
 * A learning-rate drop at `atEpoch`: the loss steps down to `factor` × its level, then follows a fresh Eq. 1
 * segment (per-epoch `b0`) whose asymptote is `floorShare` of the post-drop level.
 */
export function withLrDrop(
  before: TrueCurve,
  drop: { atEpoch: number; factor: number; b0: number; floorShare: number },
  stepsPerEpoch: number,
): TrueCurve {
  const at = drop.atEpoch * stepsPerEpoch;
  const level = before(at) * drop.factor;
  const b2 = drop.floorShare * level;
  const b1 = 1 / (level - b2);
  return (step) => (step < at ? before(step) : 1 / ((drop.b0 * (step - at)) / stepsPerEpoch + b1) + b2);
}

export interface NoiseSpec {
  /** Relative standard deviation of the logged loss. */
  readonly relative: number;
  /** Lag-1 autocorrelation of the noise (AR(1)); logged losses are often running averages. */
  readonly autocorrelation: number;
  /** Share of points that are spikes (× 1.5–3). */
  readonly outlierRate: number;
}

/** The shape a scenario's curve has, for the side-by-side with the paper's procedure. */
export type CurveFamily = 'inverse' | 'lr-drop' | 'exponential' | 'plateau' | 'power-law';

export interface Scenario {
  readonly name: string;
  /** True for curves of the paper's form (Eq. 1) without a drop. */
  readonly paperForm: boolean;
  /** Default: 'inverse' for paper-form curves, else 'power-law'. */
  readonly family?: CurveFamily;
  readonly curve: TrueCurve;
  readonly rule: ConvergenceRule;
  readonly pointsPerEpoch: number;
  readonly noise: NoiseSpec;
}

/** Epoch means of a noiseless curve (midpoint rule, up to 64 samples per epoch). */
export function trueEpochMeans(curve: TrueCurve, stepsPerEpoch: number, epochs: number): number[] {
  const samples = Math.max(1, Math.min(64, Math.floor(stepsPerEpoch)));
  const means: number[] = [];
  for (let e = 0; e < epochs; e++) {
    let sum = 0;
    for (let i = 0; i < samples; i++) sum += curve((e + (i + 0.5) / samples) * stepsPerEpoch);
    means.push(sum / samples);
  }
  return means;
}

/** Ground truth: the rule applied to the noiseless curve; null if not met within `maxEpochs`. */
export function trueTotalSteps(curve: TrueCurve, rule: ConvergenceRule, maxEpochs = 5000): number | null {
  const e = convergedEpochOf(
    trueEpochMeans(curve, rule.stepsPerEpoch, maxEpochs),
    rule.threshold,
    rule.patience,
  );
  return e === null ? null : (e + 1) * rule.stepsPerEpoch;
}

/** Noisy observations of the scenario's curve at evenly spaced steps below `untilStep`. */
export function observe(scenario: Scenario, untilStep: number, random: () => number): LossPoint[] {
  const spacing = scenario.rule.stepsPerEpoch / scenario.pointsPerEpoch;
  const { relative, autocorrelation: rho, outlierRate } = scenario.noise;
  const innovation = Math.sqrt(1 - rho * rho);
  const points: LossPoint[] = [];
  let eps = gaussian(random);
  for (let i = 0; ; i++) {
    const step = Math.floor((i + 0.5) * spacing);
    if (step >= untilStep) break;
    eps = rho * eps + innovation * gaussian(random);
    let loss = scenario.curve(step) * Math.max(0.05, 1 + relative * eps);
    if (random() < outlierRate) loss *= 1.5 + 1.5 * random();
    points.push({ step, loss });
  }
  return points;
}
