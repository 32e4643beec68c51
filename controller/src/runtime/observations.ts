/**
 * Observations of one job, built from its tasks' metrics records: loss by global step,
 * speed by shape, and the latest per-worker step time. Pure: time comes in on the records.
 */
import { BOUNDS, clamp } from '../../../shared/src/bounds';
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import type { LossPoint } from '../models/convergence/types';
import type { SpeedSample } from '../models/speed/types';
import type { JobShape } from '../scheduling/types';
import { perWorkerBatch, type JobSpec } from './job-spec';

/** A period during which the job ran at one shape; `since`/`until` are wall-clock ms (record `ts`). */
export interface ShapeSpan {
  readonly shape: JobShape;
  readonly since: number;
  until: number | null;
  /** True when the models were fitted at the time the shape was chosen (not a pre-run sample). */
  readonly fitted: boolean;
}

interface WorkerStats {
  sum: number;
  n: number;
  /** Reported step times (seconds), when the records carry them. */
  stepSum: number;
  stepN: number;
}

export class JobObservations {
  private readonly losses = new Map<number, number>();
  /** {@link lossPoints}, kept until a new loss arrives. */
  private sortedLosses: LossPoint[] | null = null;
  /** Sum and count of the losses per epoch (a point at step s is in epoch ⌈s / spe⌉ − 1). */
  private readonly perEpoch = new Map<number, { sum: number; n: number }>();
  /** span index → worker index → speed stats (steps/s of that worker). */
  private readonly speeds = new Map<number, Map<number, WorkerStats>>();
  private maxStep = 0;
  records = 0;
  /** Moves with every record taken: what was derived from the observations is stale when it moved. */
  version = 0;
  private samplesCache: {
    readonly version: number;
    readonly spans: readonly ShapeSpan[];
    readonly spanCount: number;
    readonly samples: readonly SpeedSample[];
  } | null = null;

  constructor(private readonly spec: JobSpec) {}

  add(task: TaskId, r: MetricsRecord, spans: readonly ShapeSpan[]): void {
    const coordinator = this.spec.progressFrom === 'coordinator';
    if (coordinator ? task.role !== 'scheduler' || task.index !== 0 : task.role !== 'worker') return;
    this.records += 1;
    this.version += 1;
    const spanIndex = findSpan(spans, r.ts);
    const span = spanIndex === -1 ? undefined : spans[spanIndex];
    const workers = span?.shape.workers ?? 1;
    // The coordinator counts the job's steps itself: its batch counter is already global.
    const step = this.globalStep(r, coordinator ? 1 : workers);
    if (step !== null) this.maxStep = Math.max(this.maxStep, step);
    // Worker 0's loss stands for the job (sync workers share parameters, async ones nearly so).
    if (task.index === 0 && r.loss !== null && step !== null && r.kind !== 'validation') {
      this.setLoss(step, r.loss);
    }
    if (coordinator) return this.addCoordinatorSpeed(spanIndex, r);
    if (r.kind !== 'batch' || r.samplesPerSec === null || span === undefined) return;
    // Clamped like every figure the models derive: the wire bounds each input, not their quotients.
    const stepsPerSec = clamp(
      r.samplesPerSec / perWorkerBatch(this.spec, workers),
      0,
      BOUNDS.samplesPerSec.max,
    );
    this.addSpeed(spanIndex, task.index, stepsPerSec, r.stepTime);
  }

  /** Loss points sorted by step (a shared array: callers must not change it). */
  lossPoints(): readonly LossPoint[] {
    this.sortedLosses ??= [...this.losses]
      .map(([step, loss]) => ({ step, loss }))
      .sort((a, b) => a.step - b.step);
    return this.sortedLosses;
  }

  /** Mean loss per epoch, by epoch (unsorted; every epoch that has a point). */
  epochLosses(): ReadonlyMap<number, { readonly sum: number; readonly n: number }> {
    return this.perEpoch;
  }

  private setLoss(step: number, loss: number): void {
    const epoch = Math.ceil(step / this.spec.stepsPerEpoch) - 1;
    const old = this.losses.get(step);
    const acc = this.perEpoch.get(epoch) ?? { sum: 0, n: 0 };
    if (old === undefined) acc.n += 1;
    else acc.sum -= old;
    acc.sum += loss;
    this.perEpoch.set(epoch, acc);
    this.losses.set(step, loss);
    this.sortedLosses = null;
  }

  /** Steps done so far (the furthest global step seen). */
  stepsDone(): number {
    return this.maxStep;
  }

  /**
   * One speed sample per shape: sync = mean worker speed, async = sum of worker speeds. Kept until a
   * record arrives or a span is added: every round reads every job's samples (its own fit, its peers'
   * pools), and recomputing them was an eighth of a simulation's CPU.
   */
  speedSamples(spans: readonly ShapeSpan[]): readonly SpeedSample[] {
    const c = this.samplesCache;
    if (c && c.version === this.version && c.spans === spans && c.spanCount === spans.length)
      return c.samples;
    const samples = this.computeSpeedSamples(spans);
    this.samplesCache = { version: this.version, spans, spanCount: spans.length, samples };
    return samples;
  }

  private computeSpeedSamples(spans: readonly ShapeSpan[]): readonly SpeedSample[] {
    const byShape = new Map<string, { ps: number; workers: number; total: number; weight: number }>();
    for (const [i, workers] of this.speeds) {
      const span = spans[i];
      if (!span) continue;
      const means = [...workers.values()].filter((w) => w.n > 0).map((w) => ({ mean: w.sum / w.n, n: w.n }));
      if (means.length === 0) continue;
      const sum = means.reduce((a, m) => a + m.mean, 0);
      // Sync workers share each step; async ones add up — unless the one reporter is the coordinator.
      const total = this.spec.mode === 'async' && this.spec.progressFrom !== 'coordinator';
      const speed = total ? (sum / means.length) * span.shape.workers : sum / means.length;
      const n = means.reduce((a, m) => a + m.n, 0);
      const key = `${span.shape.ps}x${span.shape.workers}`;
      const acc = byShape.get(key) ?? { ...span.shape, total: 0, weight: 0 };
      acc.total += speed * n;
      acc.weight += n;
      byShape.set(key, acc);
    }
    return [...byShape.values()].map((s) => ({
      ps: s.ps,
      workers: s.workers,
      stepsPerSec: s.total / s.weight,
      weight: s.weight,
    }));
  }

  /**
   * Speed records a sample shape needs before it is measured: `perReporter` from each task that
   * reports speed (every worker, or the one coordinator).
   */
  samplesNeeded(perReporter: number, workers: number): number {
    return perReporter * (this.spec.progressFrom === 'coordinator' ? 1 : workers);
  }

  /** Records with speed at the span `index` (warm-up excluded), summed over workers. */
  samplesInSpan(index: number): number {
    let n = 0;
    for (const w of this.speeds.get(index)?.values() ?? []) n += w.n;
    return n;
  }

  /**
   * Mean step time (seconds) per worker index in span `index`, for straggler detection. Only the
   * current span counts: a replaced worker starts a new span and is judged on its own records.
   */
  workerStepTimes(index: number): Record<number, number> {
    const out: Record<number, number> = {};
    // A reported step time is the worker's own (a sync worker's rate is the barrier's); else the
    // rate says it.
    for (const [worker, w] of this.speeds.get(index) ?? []) {
      if (w.stepN > 0) out[worker] = w.stepSum / w.stepN;
      else if (w.n > 0 && w.sum > 0) out[worker] = w.n / w.sum;
    }
    return out;
  }

  /**
   * The coordinator's step rate is the job's: one speed per record, from its step time (an epoch
   * line's average is the best there is) or its rate, kept as worker 0's so the sample is not
   * multiplied by the workers again.
   */
  private addCoordinatorSpeed(span: number, r: MetricsRecord): void {
    if (span === -1 || (r.kind !== 'batch' && r.kind !== 'epoch')) return;
    const stepsPerSec =
      r.stepTime !== null && r.stepTime > 0
        ? 1 / r.stepTime
        : r.samplesPerSec !== null
          ? r.samplesPerSec / perWorkerBatch(this.spec, 1)
          : null;
    if (stepsPerSec === null || !Number.isFinite(stepsPerSec)) return;
    this.addSpeed(span, 0, clamp(stepsPerSec, 0, BOUNDS.samplesPerSec.max), r.stepTime);
  }

  private addSpeed(span: number, worker: number, stepsPerSec: number, stepTime: number | null): void {
    let m = this.speeds.get(span);
    if (!m) this.speeds.set(span, (m = new Map<number, WorkerStats>()));
    const w = m.get(worker);
    if (!w) {
      // The first record of each worker in a span is warm-up (cuDNN autotune, data loading): skipped.
      m.set(worker, { sum: 0, n: 0, stepSum: 0, stepN: 0 });
      return;
    }
    w.sum += stepsPerSec;
    w.n += 1;
    if (stepTime !== null && Number.isFinite(stepTime) && stepTime > 0) {
      w.stepSum += stepTime;
      w.stepN += 1;
    }
  }

  /** Global step of a record. Async workers each cover 1/w of an epoch's steps. */
  private globalStep(r: MetricsRecord, workers: number): number | null {
    // A checkpoint line says nothing about progress that the epoch lines have not said.
    if (r.epoch === null || r.kind === 'checkpoint') return null;
    const base = r.epoch * this.spec.stepsPerEpoch;
    const perWorker = this.spec.mode === 'async' ? workers : 1;
    // An epoch summary without a batch (MXNet's `Train-accuracy`) ends the epoch; one with a batch
    // (Keras' `500/500`, Lightning's `938/938`) says how far the epoch went.
    if (r.kind === 'epoch')
      return safeStep(
        base +
          (r.batch === null
            ? this.spec.stepsPerEpoch
            : Math.min(this.spec.stepsPerEpoch, r.batch * perWorker)),
      );
    if (r.batch === null) return null;
    return safeStep(base + Math.min(this.spec.stepsPerEpoch, (r.batch + 1) * perWorker));
  }
}

const safeStep = (step: number): number => clamp(step, 0, Number.MAX_SAFE_INTEGER);

/** Index of the span containing wall-clock `ts`, or -1. */
export function findSpan(spans: readonly ShapeSpan[], ts: number): number {
  for (let i = spans.length - 1; i >= 0; i -= 1) {
    const s = spans[i]!;
    if (s.since <= ts && (s.until === null || ts < s.until)) return i;
  }
  return -1;
}
