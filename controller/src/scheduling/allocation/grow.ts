/**
 * The greedy loop of paper §4.1 over dense per-job arrays. Same logic as reading the job objects,
 * laid out for the cache: at the paper's scale the loop runs ~100,000 times per round in
 * effectively random job order, and with objects every step was a chain of cache misses (job →
 * snapshot → demand → …). Only the speed model call still goes through an object.
 */
import type { SpeedModel } from '../../models/speed/types';
import { GainHeap } from '../core/gain-heap';
import { remainingSeconds, saving } from '../core/remaining-time';
import { EPSILON } from '../core/resource-vector';
import type { GrowState } from './minimum-shapes';

// A task that asks for a vanishing share still costs something; avoids dividing by zero.
const MIN_SHARE = 1e-12;

class Slots {
  readonly r: number;
  readonly ps: Int32Array;
  readonly workers: Int32Array;
  readonly maxPs: Int32Array;
  readonly maxWorkers: Int32Array;
  readonly time: Float64Array;
  readonly steps: Float64Array;
  /** priority / dominant share of one task. */
  readonly psWeight: Float64Array;
  readonly workerWeight: Float64Array;
  /** Demand vectors, `r` numbers per slot. */
  readonly psDemand: Float64Array;
  readonly workerDemand: Float64Array;
  readonly speed: SpeedModel[];
  /** The best next step: WORKER, PS or PAIR. */
  readonly next: Uint8Array;
  readonly pairWeight: Float64Array;
  /** Per slot: seconds a restart costs the job (0: the rule is off for it). */
  readonly restart: Float64Array;
  /** Current shape of a running job (-1 otherwise): any other shape costs a restart. */
  readonly curPs: Int32Array;
  readonly curWorkers: Int32Array;
  readonly nextTime: Float64Array;
  readonly heap: GainHeap;

  constructor(
    states: readonly GrowState[],
    r: number,
    readonly relative: boolean,
    readonly pairs: boolean,
    restartAware: boolean,
  ) {
    const n = states.length;
    this.r = r;
    this.ps = Int32Array.from(states, (s) => s.ps);
    this.workers = Int32Array.from(states, (s) => s.workers);
    // Bounds beyond int32 (an "unbounded" max) are capped: the pool stops growth long before.
    this.maxPs = Int32Array.from(states, (s) => Math.min(s.job.maxPs, 2 ** 31 - 1));
    this.maxWorkers = Int32Array.from(states, (s) => Math.min(s.job.maxWorkers, 2 ** 31 - 1));
    this.time = Float64Array.from(states, (s) => s.time);
    this.steps = Float64Array.from(states, (s) => s.job.steps);
    this.psWeight = Float64Array.from(states, (s) => s.job.priority / Math.max(s.job.psShare, MIN_SHARE));
    this.workerWeight = Float64Array.from(
      states,
      (s) => s.job.priority / Math.max(s.job.workerShare, MIN_SHARE),
    );
    this.psDemand = new Float64Array(n * r);
    this.workerDemand = new Float64Array(n * r);
    states.forEach((s, i) => {
      this.psDemand.set(s.job.ps, i * r);
      this.workerDemand.set(s.job.worker, i * r);
    });
    this.speed = states.map((s) => s.job.speed);
    // Each job's own restart cost (measured, else the prior); 0 when the rule is off.
    this.restart = Float64Array.from(states, (s) => (restartAware ? s.job.restartSec : 0));
    this.curPs = Int32Array.from(states, (s, i) =>
      (this.restart[i] ?? 0) > 0 ? (s.job.snapshot.current?.shape.ps ?? -1) : -1,
    );
    this.curWorkers = Int32Array.from(states, (s) => s.job.snapshot.current?.shape.workers ?? -1);
    states.forEach((st, i) => {
      if ((this.restart[i] ?? 0) > 0) this.time[i] = this.remaining(i, st.ps, st.workers);
    });
    this.next = new Uint8Array(n);
    this.pairWeight = Float64Array.from(
      states,
      (s) => s.job.priority / Math.max(s.job.psShare + s.job.workerShare, MIN_SHARE),
    );
    this.nextTime = new Float64Array(n);
    this.heap = new GainHeap(states.map((s) => s.rank));
  }

  remaining(slot: number, ps: number, workers: number): number {
    const steps = this.steps[slot] ?? 0;
    if (steps <= 0) return 0;
    const speed = this.speed[slot]?.predict(ps, workers).stepsPerSec ?? 0;
    const t = Number.isFinite(speed) && speed > 0 ? steps / speed : Infinity;
    const cur = this.curPs[slot] ?? -1;
    const moved = cur >= 0 && (cur !== ps || this.curWorkers[slot] !== workers);
    return moved ? t + (this.restart[slot] ?? 0) : t;
  }

  fits(pool: Float64Array, demand: Float64Array, slot: number): boolean {
    const at = slot * this.r;
    for (let i = 0; i < this.r; i++) if ((demand[at + i] ?? 0) > (pool[i] ?? 0) + EPSILON) return false;
    return true;
  }

  take(pool: Float64Array, demand: Float64Array, slot: number): void {
    const at = slot * this.r;
    for (let i = 0; i < this.r; i++) pool[i] = (pool[i] ?? 0) - (demand[at + i] ?? 0);
  }

  /**
   * Seconds saved, or with `relative` the fraction of the remaining time saved: the same saving
   * is worth more to a job that finishes sooner (see `GainMode`).
   */
  gainOf(now: number, next: number): number {
    const s = saving(now, next);
    if (!this.relative) return s;
    if (!Number.isFinite(now)) return Number.isFinite(next) ? Number.MAX_VALUE : 0;
    return now > 0 ? s / now : 0;
  }

  /** Writes the slot's best next step that fits; false when no positive gain fits. */
  refresh(slot: number, pool: Float64Array): boolean {
    const ps = this.ps[slot] ?? 0;
    const workers = this.workers[slot] ?? 0;
    const now = this.time[slot] ?? 0;
    const canPs = ps < (this.maxPs[slot] ?? 0) && this.fits(pool, this.psDemand, slot);
    const canWorker = workers < (this.maxWorkers[slot] ?? 0) && this.fits(pool, this.workerDemand, slot);
    let gain = 0;
    const consider = (kind: number, time: number, weight: number): void => {
      const g = this.gainOf(now, time) * weight;
      if (g > 0 && g >= gain) {
        gain = g;
        this.next[slot] = kind;
        this.nextTime[slot] = time;
      }
    };
    // Order matters for ties: the later kind wins. A worker is the usual way a PS job speeds up.
    if (canPs) consider(PS, this.remaining(slot, ps + 1, workers), this.psWeight[slot] ?? 0);
    if (canWorker) consider(WORKER, this.remaining(slot, ps, workers + 1), this.workerWeight[slot] ?? 0);
    // Look-ahead: one PS and one worker together, per unit of both their shares. Escapes the
    // local optima where neither task alone helps (a worker adds PS load, a PS adds overhead).
    if (this.pairs && canPs && canWorker && this.fitsBoth(pool, slot)) {
      const time = this.remaining(slot, ps + 1, workers + 1);
      const g = this.gainOf(now, time) * (this.pairWeight[slot] ?? 0);
      if (g > gain) {
        gain = g;
        this.next[slot] = PAIR;
        this.nextTime[slot] = time;
      }
    }
    this.heap.gain[slot] = gain;
    return gain > 0;
  }

  fitsBoth(pool: Float64Array, slot: number): boolean {
    const at = slot * this.r;
    for (let i = 0; i < this.r; i++) {
      const need = (this.psDemand[at + i] ?? 0) + (this.workerDemand[at + i] ?? 0);
      if (need > (pool[i] ?? 0) + EPSILON) return false;
    }
    return true;
  }

  /** Grants one task of a kind; false when it does not fit the pool. */
  grant(slot: number, isPs: boolean, pool: Float64Array): boolean {
    const demand = isPs ? this.psDemand : this.workerDemand;
    if (!this.fits(pool, demand, slot)) return false;
    this.take(pool, demand, slot);
    if (isPs) this.ps[slot] = (this.ps[slot] ?? 0) + 1;
    else this.workers[slot] = (this.workers[slot] ?? 0) + 1;
    return true;
  }
}

const WORKER = 0;
const PS = 1;
const PAIR = 2;

export interface GrowOptions {
  /** Weigh the fraction of remaining time saved instead of the seconds. */
  readonly relative?: boolean;
  /** Also consider +1 PS +1 worker as one step. */
  readonly pairs?: boolean;
  /**
   * A running job's time at another shape includes what a restart costs it (its own restart
   * seconds, `PreparedJob.restartSec`).
   */
  readonly restartAware?: boolean;
}

/**
 * Pops the job with the largest gain, adds its task (or its PS + worker pair), recomputes only
 * that job; a step that no longer fits is dropped and the job's other options are tried. Stops
 * when no positive gain fits. Updates `states` and consumes `pool`.
 */
export function grow(states: readonly GrowState[], pool: Float64Array, options: GrowOptions = {}): void {
  const s = new Slots(
    states,
    pool.length,
    options.relative ?? false,
    options.pairs ?? false,
    options.restartAware ?? false,
  );
  for (let slot = 0; slot < states.length; slot++) if (s.refresh(slot, pool)) s.heap.push(slot);
  for (let slot = s.heap.pop(); slot >= 0; slot = s.heap.pop()) {
    const kind = s.next[slot] ?? WORKER;
    // A pair was checked to fit as a whole in `refresh`, and the pool only shrinks since.
    const granted =
      kind === PAIR
        ? s.fitsBoth(pool, slot) && s.grant(slot, true, pool) && s.grant(slot, false, pool)
        : s.grant(slot, kind === PS, pool);
    if (granted) s.time[slot] = s.nextTime[slot] ?? 0;
    if (s.refresh(slot, pool)) s.heap.push(slot);
  }
  states.forEach((state, slot) => {
    state.ps = s.ps[slot] ?? state.ps;
    state.workers = s.workers[slot] ?? state.workers;
    state.time =
      (s.restart[slot] ?? 0) > 0
        ? remainingSeconds(state.job, state.ps, state.workers)
        : (s.time[slot] ?? state.time);
  });
}
