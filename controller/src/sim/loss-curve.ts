/**
 * Ground-truth loss curves (hidden from the scheduler), the convergence rule applied to them, and the
 * noisy loss points a sidecar would report.
 */
import { firstConvergedEpoch } from '../models/convergence/rule';
import type { LossPoint } from '../models/convergence/types';
import { hashedNormal } from './rng';
import type { LossCurve, Work } from './trace';

const inverse = (b0: number, b1: number, b2: number, e: number): number => 1 / (b0 * e + b1) + b2;

/** Loss at fractional epoch `e` ≥ 0. */
export function lossAt(curve: LossCurve, e: number): number {
  switch (curve.kind) {
    case 'inverse':
      return inverse(curve.beta0, curve.beta1, curve.beta2, e);
    case 'lr-drop': {
      const base = inverse(curve.beta0, curve.beta1, curve.beta2, e);
      if (e < curve.dropEpoch) return base;
      // A lower learning rate removes part of the excess loss within about an epoch.
      const excess = base - curve.beta2;
      return base - curve.dropFraction * excess * (1 - Math.exp(-(e - curve.dropEpoch) / 0.5));
    }
    case 'plateau': {
      // Warped time: the curve starts flat (zero slope) and catches up after `plateauEpochs`.
      const p = curve.plateauEpochs;
      const g = e < p ? (e * e) / (2 * p) : e - p / 2;
      return inverse(curve.beta0, curve.beta1, curve.beta2, g);
    }
    case 'exponential':
      return curve.a * Math.exp(-e / curve.tau) + curve.c;
  }
}

export interface ConvergenceTruth {
  readonly curve: LossCurve;
  readonly threshold: number;
  readonly patience: number;
  readonly noise: number;
}

/**
 * The epoch at which the rule (the estimation model's own, imported) first holds on the noise-free curve.
 * Every built-in curve decreases, so its largest loss is the one of epoch 0.
 * Returns `maxEpochs` when the rule never holds before it.
 */
export function convergenceEpoch(truth: ConvergenceTruth, maxEpochs = 5000): number {
  const convex = truth.curve.kind === 'inverse' || truth.curve.kind === 'exponential';
  const e = firstConvergedEpoch({
    epochLoss: (epoch) => lossAt(truth.curve, epoch),
    normaliser: lossAt(truth.curve, 0),
    threshold: truth.threshold,
    patience: truth.patience,
    // Convex decreasing curves allow the rule's binary search of the tail; the others are walked.
    scanUpTo: convex ? 0 : maxEpochs,
    convexTail: convex,
    maxEpoch: maxEpochs,
  });
  return e ?? maxEpochs;
}

/**
 * The convergence rule of every job whose trace gives a fixed amount of work (other simulators'
 * traces, DL2's), as its user would set it: one rule for all jobs, so it says nothing about any
 * one job's work. δ = 0.0005 lets the curve below reach about 470 epochs (DL2's jobs need 15–288).
 */
export const FIXED_WORK_RULE = { threshold: 0.0005, patience: 3, noise: 0.03 } as const;
/** The fixed-work curve l(e) = 1/(β0·e + β1) + β2 (the paper's Seq2Seq-like fit); β0 sets its length. */
const FIXED_WORK_CURVE = { beta1: 1, beta2: 0.05 } as const;

const fixedWorkTruth = (beta0: number): ConvergenceTruth => ({
  ...FIXED_WORK_RULE,
  curve: { kind: 'inverse', beta0, ...FIXED_WORK_CURVE },
});

/**
 * The fixed-work curve whose rule (`FIXED_WORK_RULE`, the same for every job) holds at about
 * `epochs`: the job's work is in the curve's speed β0 only, which the runtime must estimate from
 * the logged loss — it is never told the epochs. On the branch used (β0 ≥ 4·δ·l(0)) the epoch
 * falls as β0 grows, so β0 is found by bisection in log space; a job longer than the rule allows
 * gets the longest curve (its program still ends at its true steps).
 */
export function curveForEpochs(epochs: number): ConvergenceTruth {
  const l0 = 1 / FIXED_WORK_CURVE.beta1 + FIXED_WORK_CURVE.beta2;
  let lo = 4 * FIXED_WORK_RULE.threshold * l0;
  let hi = 1e3;
  for (let i = 0; i < 60; i++) {
    const mid = Math.sqrt(lo * hi);
    // A faster-falling curve (larger β0) converges earlier.
    if (convergenceEpoch(fixedWorkTruth(mid), 100_000) > epochs) lo = mid;
    else hi = mid;
  }
  return fixedWorkTruth(hi);
}

/** The hidden truth of a job: its loss curve and the total steps it needs. */
export interface JobTruth {
  readonly convergence: ConvergenceTruth;
  readonly totalSteps: number;
}

/** Resolves a trace job's work into a loss curve and a total number of steps. */
export function resolveWork(work: Work, stepsPerEpoch: number): JobTruth {
  if (work.kind === 'loss-curve') {
    const convergence = {
      curve: work.curve,
      threshold: work.threshold,
      patience: work.patience,
      noise: work.noise,
    };
    return { convergence, totalSteps: convergenceEpoch(convergence) * stepsPerEpoch };
  }
  const steps = work.kind === 'steps' ? work.steps : work.epochs * stepsPerEpoch;
  return { convergence: curveForEpochs(steps / stepsPerEpoch), totalSteps: Math.ceil(steps) };
}

/** Options of {@link observeLoss}. */
export interface ObserveLossOptions {
  readonly seed: number;
  readonly jobId: string;
  readonly truth: ConvergenceTruth;
  readonly stepsPerEpoch: number;
  /** Steps between two reported points (the sidecar's reporting granularity after averaging). */
  readonly every: number;
  readonly fromStep: number;
  readonly toStep: number;
}

/** The noisy points reported for steps in (fromStep, toStep], one every `every` steps. */
export function observeLoss(o: ObserveLossOptions): LossPoint[] {
  const out: LossPoint[] = [];
  const first = Math.floor(o.fromStep / o.every) + 1;
  for (let i = first; i * o.every <= o.toStep; i++) {
    const step = i * o.every;
    const clean = lossAt(o.truth.curve, step / o.stepsPerEpoch);
    const loss = clean * (1 + o.truth.noise * hashedNormal(o.seed, o.jobId, i));
    out.push({ step, loss: Math.max(loss, clean * 0.05) });
  }
  return out;
}
