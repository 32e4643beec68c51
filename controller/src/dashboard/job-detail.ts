/**
 * The One-job page: loss points with the fitted curve, the predicted convergence step and its
 * interval, how the prediction moved, the speed model over shapes (measured shapes marked), the
 * shape over time (pre-run samples marked) and the decisions that changed it. Every time is given
 * in job seconds (`at`, `sinceAt`, …: the clock every screen shows); wall-clock ms stay beside
 * them (`t`, `since`) for what is labelled as wall clock. Pure.
 */
import { fittedLoss } from '../models/convergence/fitted-curve';
import type { ConvergenceEstimate, LossPoint } from '../models/convergence/types';
import type { JobView, WhatIf } from '../runtime/api-schemas';
import type { JobRecord } from '../runtime/job-record';
import type { JobState } from '../runtime/job-state';
import { MIN_FIT_SHAPES } from '../runtime/refit';
import type { JobShape } from '../scheduling/types';
import { jobSeconds, type JobClock } from './format';
import type { DecisionEntry, PredictionPoint } from './history';
import type { Interval } from './job-rows';

/** Loss points sent to the browser at most (evenly strided; the count of all is sent too). */
export const MAX_LOSS_POINTS = 400;
const CURVE_POINTS = 120;
/** The speed grid covers at most this many PS and worker counts from the job's minimums. */
export const GRID_PS = 6;
export const GRID_WORKERS = 12;

export interface SpeedCell {
  readonly ps: number;
  readonly workers: number;
  readonly stepsPerSec: number;
  readonly lower: number;
  readonly upper: number;
}

export interface JobDetail {
  readonly id: string;
  readonly phase: JobView['phase'];
  readonly state: JobState;
  /** Job seconds now, at submission and at completion; the JCT. */
  readonly elapsedSec: number;
  readonly submittedAt: number;
  readonly finishedAt: number | null;
  readonly jct: number | null;
  /** Predicted remaining job seconds at the current shape, with its interval. */
  readonly remainingSec: Interval | null;
  /** The same as wall-clock ms (shown only labelled as wall clock). */
  readonly predictedCompletion: Interval | null;
  readonly limits: { minPs: number; maxPs: number; minWorkers: number; maxWorkers: number };
  readonly loss: {
    readonly total: number;
    readonly points: readonly LossPoint[];
    /** The fitted Eq. 1 curve, sampled; null before a fit. */
    readonly curve: readonly LossPoint[] | null;
  };
  readonly convergence:
    | { status: 'ok'; predictedTotalSteps: number; lower: number; upper: number; stepsDone: number }
    | { status: 'insufficient-data'; reason: string };
  readonly predictions: readonly (PredictionPoint & { readonly at: number })[];
  readonly speed: {
    readonly fitted: boolean;
    /** Shapes the job must have run before its own speed model is fitted. */
    readonly needs: number;
    readonly current: JobShape | null;
    readonly measured: readonly { ps: number; workers: number; stepsPerSec: number }[];
    readonly grid: readonly SpeedCell[];
  };
  /** Shape over time (job seconds; wall ms in `since`/`until`); `preRun` marks the pre-run's samples. */
  readonly spans: readonly {
    since: number;
    until: number | null;
    sinceAt: number;
    untilAt: number | null;
    ps: number;
    workers: number;
    preRun: boolean;
  }[];
  readonly decisions: readonly (DecisionEntry & { readonly at: number })[];
}

export interface JobDetailInput {
  readonly clock: JobClock;
  readonly view: JobView;
  readonly record: JobRecord;
  readonly lossPoints: readonly LossPoint[];
  readonly estimate: ConvergenceEstimate | null;
  readonly predictions: readonly PredictionPoint[];
  readonly decisions: readonly DecisionEntry[];
  readonly whatIf: (ps: number, workers: number) => WhatIf;
}

export function jobDetail(i: JobDetailInput): JobDetail {
  const { spec } = i.record;
  const at = (ms: number) => jobSeconds(i.clock, ms);
  return {
    id: i.view.id,
    phase: i.view.phase,
    state: i.view.state ?? i.view.phase,
    elapsedSec: Math.round(i.clock.now() * 10) / 10,
    submittedAt: i.view.submittedAt,
    finishedAt: i.view.finishedAt,
    jct: i.view.jct,
    remainingSec: i.view.phase === 'done' ? null : i.view.plan.predictedRemainingSec,
    predictedCompletion: i.view.plan.predictedCompletionTs,
    limits: {
      minPs: spec.minPs,
      maxPs: spec.maxPs,
      minWorkers: spec.minWorkers,
      maxWorkers: spec.maxWorkers,
    },
    loss: {
      total: i.lossPoints.length,
      points: stride(i.lossPoints, MAX_LOSS_POINTS),
      curve: fittedCurve(i.estimate, i.lossPoints),
    },
    convergence:
      i.estimate?.status === 'ok'
        ? {
            status: 'ok',
            predictedTotalSteps: i.estimate.predictedTotalSteps,
            lower: i.estimate.lower,
            upper: i.estimate.upper,
            stepsDone: i.view.observations.stepsDone,
          }
        : { status: 'insufficient-data', reason: i.estimate?.reason ?? 'not fitted yet' },
    predictions: i.predictions.map((p) => ({ ...p, at: at(p.t) })),
    speed: {
      fitted: i.view.models?.speedFitted ?? false,
      needs: MIN_FIT_SHAPES,
      current: i.view.shape,
      measured: i.view.observations.speedShapes.map((s) => ({
        ps: s.ps,
        workers: s.workers,
        stepsPerSec: s.stepsPerSec,
      })),
      grid: speedGrid(i.record, i.whatIf),
    },
    // The pre-run's samples are the job's first spans, one per sample shape.
    spans: i.record.spans.map((s, index) => ({
      since: s.since,
      until: s.until,
      sinceAt: at(s.since),
      untilAt: s.until === null ? null : at(s.until),
      ps: s.shape.ps,
      workers: s.shape.workers,
      preRun: index < (i.record.preRun?.shapes.length ?? 0),
    })),
    decisions: i.decisions.map((d) => ({ ...d, at: at(d.t) })),
  };
}

/** Every `k`-th point so at most `max` remain; the last point is always kept. */
export function stride<T>(points: readonly T[], max: number): T[] {
  if (points.length <= max) return [...points];
  const k = Math.ceil(points.length / max);
  const out = points.filter((_, i) => i % k === 0);
  const last = points.at(-1);
  if (last !== undefined && out.at(-1) !== last) out.push(last);
  return out;
}

/** Eq. 1 with the fitted β from the fit's first step to beyond the predicted interval. */
export function fittedCurve(
  est: ConvergenceEstimate | null,
  points: readonly LossPoint[],
): LossPoint[] | null {
  if (est?.status !== 'ok') return null;
  const start = est.fitStartStep ?? 0;
  const end = Math.max(est.upper, points.at(-1)?.step ?? 0);
  if (!(end > start)) return null;
  const out: LossPoint[] = [];
  for (let i = 0; i <= CURVE_POINTS; i += 1) {
    const step = start + ((end - start) * i) / CURVE_POINTS;
    const loss = fittedLoss(est, step - start);
    if (Number.isFinite(loss)) out.push({ step: Math.round(step * 10) / 10, loss });
  }
  return out;
}

function speedGrid(rec: JobRecord, whatIf: JobDetailInput['whatIf']): SpeedCell[] {
  const { spec } = rec;
  const cells: SpeedCell[] = [];
  for (let ps = spec.minPs; ps <= Math.min(spec.maxPs, spec.minPs + GRID_PS - 1); ps += 1)
    for (
      let w = spec.minWorkers;
      w <= Math.min(spec.maxWorkers, spec.minWorkers + GRID_WORKERS - 1);
      w += 1
    ) {
      const s = whatIf(ps, w).stepsPerSec;
      cells.push({ ps, workers: w, stepsPerSec: s.stepsPerSec, lower: s.lower, upper: s.upper });
    }
  return cells;
}
