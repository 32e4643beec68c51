/**
 * The emulated training program of one simulated job: it progresses at its true speed for the shape
 * and placement it runs at (nothing during a checkpoint → restart pause), logs what MXNet's
 * Speedometer would — one record per worker every few batches, with the worker's samples/s, step
 * time and a noisy loss of the true curve — and exits when its own stopping rule (the convergence
 * rule on the noise-free curve, like the local mode's trainer) is reached. The records go through
 * the runtime's real ingest; the scheduler learns nothing else about the job.
 */
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import { perWorkerBatch } from '../runtime/batch';
import type { TaskPlacement } from '../scheduling/types';
import { lossAt, resolveWork, type JobTruth } from './loss-curve';
import { placementSpeedFactor } from './locality';
import type { MeasuredModel } from './measured-table';
import { blockFactorCache } from './parameter-blocks';
import { hashedNormal } from './rng';
import type { SimJobState } from './sim-executor';
import { resolveSpeed, type TrueSpeedModel } from './speed-truth';
import { nextSlowdownChange, stragglerSpeedFactor, workerSlowdowns, type Slowdown } from './straggler-truth';
import type { TraceJob } from './trace';
import { SIM_ORIGIN_MS } from './virtual-time';

/** Relative noise of one logged speed (a Speedometer line covers a few batches). */
export const RECORD_SPEED_NOISE = 0.05;
/** MXNet's `--disp-batches` default in its image-classification example: a line every 20 batches. */
export const DISPLAY_BATCHES = 20;
/** At most this many lines per worker per epoch (long epochs log no more often than that). */
export const LINES_PER_EPOCH = 8;

export interface TrainerOptions {
  readonly job: TraceJob;
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  /** Seed of the observation noise. */
  readonly seed: number;
  readonly namespace: string;
  readonly name: string;
  /** Slow periods of servers (the trace's `cluster.slowdowns`): stragglers. */
  readonly slowdowns?: readonly Slowdown[];
  /** How the policy's jobs assign parameter blocks to PS (with the job's `parameterBlocks`). */
  readonly assignment?: 'paa' | 'mxnet-default';
  /** Relative noise of one logged speed (default {@link RECORD_SPEED_NOISE}). */
  readonly speedNoise?: number;
}

export class SimTrainer {
  readonly truth: JobTruth;
  readonly speed: TrueSpeedModel;
  /** Global steps done (fractional). */
  done = 0;
  /** Job seconds at which the program exited; null while it runs. */
  exitedAt: number | null = null;
  /** Global steps between two logged lines. */
  readonly every: number;
  private nextLine: number;
  private lines = 0;
  private readonly seqs = new Map<number, number>();
  private cache: { placement: readonly TaskPlacement[]; at: number; value: number } | null = null;
  private readonly blockFactor: (ps: number, commShare: number) => number;
  private readonly slowdowns: readonly Slowdown[];

  constructor(readonly o: TrainerOptions) {
    this.truth = resolveWork(o.job.work, o.job.stepsPerEpoch);
    this.speed = resolveSpeed(o.job, o.measured);
    this.every = Math.max(DISPLAY_BATCHES, Math.ceil(o.job.stepsPerEpoch / LINES_PER_EPOCH));
    this.nextLine = this.every;
    this.slowdowns = o.slowdowns ?? [];
    this.blockFactor = blockFactorCache({
      blocks: o.job.parameterBlocks ?? [],
      rule: o.assignment ?? 'mxnet-default',
    });
  }

  get totalSteps(): number {
    return this.truth.totalSteps;
  }

  /**
   * True speed (global steps/s) at the job's shape and placement at time `t`; 0 when nothing runs.
   * The measured speed, times the locality of the placement, the PS load balance of the parameter
   * assignment, and the slowest worker (sync) or the workers' mean (async) when servers run slow.
   */
  currentSpeed(state: SimJobState, t: number): number {
    if (!state.shape || this.exitedAt !== null) return 0;
    const at = this.slowdowns.length === 0 ? 0 : this.slowdownEpoch(t);
    if (this.cache && this.cache.placement === state.placement && this.cache.at === at)
      return this.cache.value;
    const value = this.baseSpeed(state) * this.stragglerFactor(state, t);
    this.cache = { placement: state.placement, at, value };
    return value;
  }

  /** The speed without slow servers. */
  private baseSpeed(state: SimJobState): number {
    const { ps, workers } = state.shape!;
    const comm = this.speed.commShare(ps, workers);
    return (
      this.speed.speed(ps, workers) * placementSpeedFactor(comm, state.placement) * this.blockFactor(ps, comm)
    );
  }

  private stragglerFactor(state: SimJobState, t: number): number {
    if (this.slowdowns.length === 0) return 1;
    return stragglerSpeedFactor({
      mode: this.o.job.mode,
      placement: state.placement,
      slowdowns: this.slowdowns,
      t,
    });
  }

  /** Which stretch between two slowdown changes `t` is in (the speed is constant within one). */
  private slowdownEpoch(t: number): number {
    let n = 0;
    for (const s of this.slowdowns) {
      if (t >= s.from) n += 1;
      if (s.to !== undefined && t >= s.to) n += 1;
    }
    return n;
  }

  /** Job seconds of the next slowdown change after `t` (the driver stops there), or Infinity. */
  nextSpeedChange(t: number): number {
    return this.slowdowns.length === 0 ? Infinity : nextSlowdownChange(this.slowdowns, t);
  }

  /** Job seconds of the next thing the program does (a line or its exit), or Infinity. */
  nextEventAt(state: SimJobState, now: number): number {
    const speed = this.currentSpeed(state, Math.max(now, state.pausedUntil));
    const change = this.nextSpeedChange(now);
    if (speed <= 0) return change;
    const target = Math.min(this.nextLine, this.totalSteps);
    return Math.min(change, Math.max(now, state.pausedUntil) + Math.max(0, target - this.done) / speed);
  }

  /** Progress over [from, to] (none while the restart pause lasts), at most to the next event. */
  advance(state: SimJobState, from: number, to: number): void {
    const speed = this.currentSpeed(state, Math.max(from, state.pausedUntil));
    if (speed <= 0) return;
    const dt = Math.max(0, to - Math.max(from, state.pausedUntil));
    const target = Math.min(this.nextLine, this.totalSteps);
    this.done = Math.min(this.done + speed * dt, target);
    // Float error must not leave the job a hair short of its event.
    if (target - this.done < 1e-6 * Math.max(1, target)) this.done = target;
  }

  /**
   * What the program does at `now` after {@link advance}: the lines every worker logs once the
   * next line is due, and whether it exited (at its total steps, after its last line).
   */
  step(
    state: SimJobState,
    now: number,
    wallMs: number,
  ): { records: [TaskId, MetricsRecord][]; exited: boolean } {
    const records: [TaskId, MetricsRecord][] = [];
    if (this.exitedAt !== null || !state.shape) return { records, exited: false };
    const end = this.done >= this.totalSteps;
    if (this.done >= this.nextLine || end) {
      this.logLines(state, wallMs, records);
      this.nextLine = (Math.floor(this.done / this.every) + 1) * this.every;
    }
    if (end) this.exitedAt = now;
    return { records, exited: end };
  }

  private logLines(state: SimJobState, wallMs: number, out: [TaskId, MetricsRecord][]): void {
    const shape = state.shape!;
    const { job } = this.o;
    const now = (wallMs - SIM_ORIGIN_MS) / 1000;
    const speed = this.currentSpeed(state, now);
    const async = job.mode === 'async';
    // What the runtime divides by (runtime/batch.ts), from the batch size its job spec carries.
    const perWorker = perWorkerBatch(job.mode, Math.max(1, Math.round(job.globalBatch)), shape.workers);
    // Sync: every worker does every step; async: each does 1/w of them.
    const workerSteps = async ? speed / shape.workers : speed;
    const g = Math.floor(this.done);
    const epoch = Math.max(0, Math.ceil(g / job.stepsPerEpoch) - 1);
    const stride = async ? shape.workers : 1;
    const batch = Math.max(0, Math.round((g - epoch * job.stepsPerEpoch) / stride) - 1);
    const clean = lossAt(this.truth.convergence.curve, g / job.stepsPerEpoch);
    const noisy = clean * (1 + this.truth.convergence.noise * hashedNormal(this.o.seed, job.id, g));
    const loss = Math.max(noisy, clean * 0.05);
    const line = this.lines++;
    // Slow servers: an async worker on one runs slower on its own; a sync worker's compute before
    // the barrier is longer while every worker's rate is the job's (the barrier waits for it).
    const slow = this.slowdowns.length === 0 ? null : workerSlowdowns(this.slowdowns, state.placement, now);
    // Only slow servers need the step time without them (computed once, and only then).
    const base = slow === null ? 0 : this.baseSpeed(state);
    const baseStep = async ? shape.workers / base : 1 / base;
    for (let index = 0; index < shape.workers; index += 1) {
      const f = slow?.get(index) ?? 1;
      const noise = Math.max(
        0.2,
        1 +
          (this.o.speedNoise ?? RECORD_SPEED_NOISE) *
            hashedNormal(this.o.seed, `${job.id}:rate:${index}`, line),
      );
      const rate = (async && slow ? 1 / (baseStep * f) : workerSteps) * noise;
      const stepTime = slow ? (baseStep * f) / noise : 1 / rate;
      const seq = this.seqs.get(index) ?? 0;
      this.seqs.set(index, seq + 1);
      out.push([
        { namespace: this.o.namespace, job: this.o.name, role: 'worker', index },
        {
          v: 1,
          seq,
          ts: wallMs,
          framework: 'mxnet',
          kind: 'batch',
          epoch,
          batch,
          samplesPerSec: rate * perWorker,
          stepTime,
          loss,
          lossName: 'cross-entropy',
          metrics: {},
        },
      ]);
    }
  }
}
