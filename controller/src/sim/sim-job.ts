/**
 * One job inside the simulator: its trace entry, its hidden truth, its progress, and the estimator that
 * holds what the scheduler has been told about it.
 */
import type { TaskPlacement } from '../scheduling/types';
import type { JobEstimator } from './estimator';
import { observeLoss, type JobTruth } from './loss-curve';
import { placementSpeedFactor } from './locality';
import { hashedNormal } from './rng';
import type { SimJobState } from './sim-executor';
import type { TrueSpeedModel } from './speed-truth';
import type { TraceJob } from './trace';

/** Relative noise of one step-time report of a whole interval, and of one short pre-run. */
export const SPEED_NOISE = { running: 0.03, prerun: 0.06 } as const;

export interface SimJob {
  readonly trace: TraceJob;
  readonly truth: JobTruth;
  readonly speed: TrueSpeedModel;
  readonly estimator: JobEstimator;
  /** Steps done so far (fractional). */
  done: number;
  /** Steps up to which loss points were reported. */
  reportedStep: number;
  /** Progress since the shape last changed, for the next step-time report. */
  segment: { steps: number; seconds: number };
  reports: number;
  /** Simulated time of the last report. */
  lastReport: number;
  finish: number | null;
  speedCache?: { readonly placement: readonly TaskPlacement[]; readonly value: number };
}

/** True speed of a job at its current shape and placement (0 when it holds nothing). */
export function currentSpeed(job: SimJob, state: SimJobState): number {
  if (!state.shape) return 0;
  const { ps, workers } = state.shape;
  return (
    job.speed.speed(ps, workers) * placementSpeedFactor(job.speed.commShare(ps, workers), state.placement)
  );
}

/** Progress over [from, to]: no progress while the restart pause lasts. */
export function advance(job: SimJob, state: SimJobState, from: number, to: number): void {
  const speed = currentSpeed(job, state);
  if (speed <= 0) return;
  const dt = Math.max(0, to - Math.max(from, state.pausedUntil));
  const steps = Math.min(speed * dt, job.truth.totalSteps - job.done);
  job.done += steps;
  job.segment.steps += steps;
  job.segment.seconds += steps / speed;
}

/** When the job would finish at its current speed, or Infinity. */
export function finishTime(job: SimJob, state: SimJobState, now: number): number {
  const speed = currentSpeed(job, state);
  if (speed <= 0) return Infinity;
  return Math.max(now, state.pausedUntil) + (job.truth.totalSteps - job.done) / speed;
}

/** Points per epoch the sidecar reports (averaged batches). */
const POINTS_PER_EPOCH = 8;

/** Sends what the sidecars saw since the last report: loss points and one step-time sample. */
export function report(job: SimJob, state: SimJobState, seed: number): void {
  const t = job.trace;
  const every = Math.max(1, Math.floor(t.stepsPerEpoch / POINTS_PER_EPOCH));
  const points = observeLoss({
    seed,
    jobId: t.id,
    truth: job.truth.convergence,
    stepsPerEpoch: t.stepsPerEpoch,
    every,
    fromStep: job.reportedStep,
    toStep: job.done,
  });
  job.estimator.addLoss(points);
  job.reportedStep = Math.max(job.reportedStep, Math.floor(job.done / every) * every);
  const seg = job.segment;
  if (state.shape && seg.seconds > 1) {
    const rate =
      (seg.steps / seg.seconds) *
      (1 + SPEED_NOISE.running * hashedNormal(seed, `${t.id}:rate`, job.reports++));
    job.estimator.addSpeed({ ...state.shape, stepsPerSec: Math.max(rate, 1e-9), weight: seg.seconds / 30 });
  }
  job.segment = { steps: 0, seconds: 0 };
}

/** The pre-run of a new job at a few shapes (paper §3.2): a noisy sample per shape, spread placement. */
export function prerun(job: SimJob, shapes: readonly { ps: number; workers: number }[], seed: number): void {
  shapes.forEach((s, i) => {
    const rate =
      job.speed.speed(s.ps, s.workers) *
      (1 + SPEED_NOISE.prerun * hashedNormal(seed, `${job.trace.id}:pre`, i));
    job.estimator.addSpeed({ ...s, stepsPerSec: Math.max(rate, 1e-9), weight: 1 });
  });
}
