/**
 * Bounded in-memory time series for the dashboard: how each job's prediction moved, the
 * decisions that changed it, and the cluster's utilisation. Pure: callers pass time in.
 *
 * Bounds (the memory of a long run stays flat):
 * - predictions: at most {@link HistoryLimits.predictionPoints} points per job. A point is kept only
 *   when something changed; when the series is full, every other older point is dropped, so the
 *   whole run stays visible at a coarser resolution (the newest point always survives).
 * - decisions: the newest {@link HistoryLimits.decisions} per job.
 * - utilisation: at most {@link HistoryLimits.utilisationPoints} points, thinned like predictions.
 * A removed job's history is forgotten with it.
 */
import type { Resources } from '../../../shared/src/units';
import type { JobShape } from '../scheduling/types';

export interface HistoryLimits {
  readonly predictionPoints: number;
  readonly decisions: number;
  readonly utilisationPoints: number;
}

export const DEFAULT_LIMITS: HistoryLimits = {
  predictionPoints: 512,
  decisions: 256,
  utilisationPoints: 1024,
};

/** One job's prediction at wall time `t` (ms). Null fields: not known at that time. */
export interface PredictionPoint {
  readonly t: number;
  readonly stepsDone: number;
  readonly progress: number | null;
  /** Predicted total steps to convergence with its interval (convergence model). */
  readonly totalSteps: { readonly value: number; readonly lower: number; readonly upper: number } | null;
  /** Predicted completion, wall ms, with its interval. */
  readonly completion: { readonly value: number; readonly lower: number; readonly upper: number } | null;
}

/** `move`: the same shape on other servers (a resize action that changes only the placement). */
export type DecisionKind = 'start' | 'resize' | 'move' | 'suspend' | 'replace-worker' | 'done' | 'failed';

/** Something that changed what a job runs, and why, in words. */
export interface DecisionEntry {
  readonly t: number;
  readonly round: number | null;
  readonly kind: DecisionKind;
  readonly from: JobShape | null;
  readonly to: JobShape | null;
  /** True for the shape changes of the pre-run (speed samples), false for the policy's decisions. */
  readonly preRun: boolean;
  readonly why: string;
}

export interface UtilisationPoint {
  readonly t: number;
  /** What our jobs hold plus what others reserve, summed over servers, per resource. */
  readonly used: Resources;
  readonly capacity: Resources;
}

/** A series that keeps at most `max` points by thinning its older half when full. */
export class ThinningSeries<T> {
  private items: T[] = [];

  constructor(private readonly max: number) {
    if (max < 4) throw new RangeError(`a series needs room for at least 4 points, got ${max}`);
  }

  push(p: T): void {
    this.items.push(p);
    if (this.items.length <= this.max) return;
    const last = this.items.length - 1;
    this.items = this.items.filter((_, i) => i % 2 === 0 || i === last);
  }

  last(): T | undefined {
    return this.items.at(-1);
  }

  values(): readonly T[] {
    return this.items;
  }
}

interface JobHistory {
  readonly predictions: ThinningSeries<PredictionPoint>;
  decisions: DecisionEntry[];
}

export class History {
  private readonly jobs = new Map<string, JobHistory>();
  private readonly utilisationSeries: ThinningSeries<UtilisationPoint>;

  constructor(private readonly limits: HistoryLimits = DEFAULT_LIMITS) {
    this.utilisationSeries = new ThinningSeries(limits.utilisationPoints);
  }

  /** Records a prediction when it differs from the last one; returns whether it did. */
  recordPrediction(jobId: string, p: PredictionPoint): boolean {
    const h = this.of(jobId);
    const last = h.predictions.last();
    if (last && samePrediction(last, p)) return false;
    h.predictions.push(p);
    return true;
  }

  recordDecision(jobId: string, d: DecisionEntry): void {
    const h = this.of(jobId);
    // A job ends once: the runtime may tell its end twice (the finish, then the observed wound-up job).
    const ended = (k: DecisionKind) => k === 'done' || k === 'failed';
    if (ended(d.kind) && h.decisions.some((x) => ended(x.kind))) return;
    h.decisions.push(d);
    if (h.decisions.length > this.limits.decisions) h.decisions = h.decisions.slice(-this.limits.decisions);
  }

  /** Records utilisation when it differs from the last point; returns whether it did. */
  recordUtilisation(p: UtilisationPoint): boolean {
    const last = this.utilisationSeries.last();
    if (last && sameResources(last.used, p.used) && sameResources(last.capacity, p.capacity)) return false;
    this.utilisationSeries.push(p);
    return true;
  }

  forget(jobId: string): void {
    this.jobs.delete(jobId);
  }

  /** Ids with a history (jobs removed since are forgotten by the caller). */
  jobIds(): string[] {
    return [...this.jobs.keys()];
  }

  job(jobId: string): { predictions: readonly PredictionPoint[]; decisions: readonly DecisionEntry[] } {
    const h = this.jobs.get(jobId);
    return { predictions: h?.predictions.values() ?? [], decisions: h?.decisions ?? [] };
  }

  utilisation(): readonly UtilisationPoint[] {
    return this.utilisationSeries.values();
  }

  private of(jobId: string): JobHistory {
    let h = this.jobs.get(jobId);
    if (!h)
      this.jobs.set(
        jobId,
        (h = { predictions: new ThinningSeries(this.limits.predictionPoints), decisions: [] }),
      );
    return h;
  }
}

type Interval = PredictionPoint['totalSteps'];
const sameInterval = (a: Interval, b: Interval): boolean =>
  a === b || (a !== null && b !== null && a.value === b.value && a.lower === b.lower && a.upper === b.upper);

/** Equal apart from the time; completion times within a second count as equal (they drift with the clock). */
function samePrediction(a: PredictionPoint, b: PredictionPoint): boolean {
  const near = (x: Interval, y: Interval) =>
    x === y ||
    (x !== null &&
      y !== null &&
      Math.abs(x.value - y.value) < 1000 &&
      Math.abs(x.lower - y.lower) < 1000 &&
      Math.abs(x.upper - y.upper) < 1000);
  return (
    a.stepsDone === b.stepsDone &&
    a.progress === b.progress &&
    sameInterval(a.totalSteps, b.totalSteps) &&
    near(a.completion, b.completion)
  );
}

function sameResources(a: Resources, b: Resources): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if ((a[k] ?? 0) !== (b[k] ?? 0)) return false;
  return true;
}
