/**
 * The greedy loop of paper §4.1 over dense per-job arrays. Same logic as reading the job objects,
 * laid out for the cache: at the paper's scale the loop runs ~100,000 times per round in
 * effectively random job order, and with objects every step was a chain of cache misses (job →
 * snapshot → demand → …). Only the speed model call still goes through an object.
 */
import type { SpeedModel } from '../../models/speed/types';
import { GainHeap } from '../core/gain-heap';
import { saving } from '../core/remaining-time';
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
  readonly nextIsPs: Uint8Array;
  readonly nextTime: Float64Array;
  readonly heap: GainHeap;

  constructor(states: readonly GrowState[], r: number) {
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
    this.nextIsPs = new Uint8Array(n);
    this.nextTime = new Float64Array(n);
    this.heap = new GainHeap(states.map((s) => s.rank));
  }

  remaining(slot: number, ps: number, workers: number): number {
    const steps = this.steps[slot] ?? 0;
    if (steps <= 0) return 0;
    const speed = this.speed[slot]?.predict(ps, workers).stepsPerSec ?? 0;
    return Number.isFinite(speed) && speed > 0 ? steps / speed : Infinity;
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

  /** Writes the slot's best next task that fits; false when no positive gain fits. */
  refresh(slot: number, pool: Float64Array): boolean {
    const ps = this.ps[slot] ?? 0;
    const workers = this.workers[slot] ?? 0;
    const now = this.time[slot] ?? 0;
    let gain = 0;
    if (ps < (this.maxPs[slot] ?? 0) && this.fits(pool, this.psDemand, slot)) {
      const time = this.remaining(slot, ps + 1, workers);
      gain = saving(now, time) * (this.psWeight[slot] ?? 0);
      this.nextIsPs[slot] = 1;
      this.nextTime[slot] = time;
    }
    if (workers < (this.maxWorkers[slot] ?? 0) && this.fits(pool, this.workerDemand, slot)) {
      const time = this.remaining(slot, ps, workers + 1);
      const g = saving(now, time) * (this.workerWeight[slot] ?? 0);
      // Ties go to the worker: more workers is the usual way a PS job speeds up.
      if (g > 0 && g >= gain) {
        gain = g;
        this.nextIsPs[slot] = 0;
        this.nextTime[slot] = time;
      }
    }
    this.heap.gain[slot] = gain;
    return gain > 0;
  }
}

/**
 * Pops the job with the largest gain, adds its task, recomputes only that job; a task that no
 * longer fits is dropped and the job's other task kind is tried. Stops when no positive gain
 * fits. Updates `states` and consumes `pool`.
 */
export function grow(states: readonly GrowState[], pool: Float64Array): void {
  const s = new Slots(states, pool.length);
  for (let slot = 0; slot < states.length; slot++) if (s.refresh(slot, pool)) s.heap.push(slot);
  for (let slot = s.heap.pop(); slot >= 0; slot = s.heap.pop()) {
    const isPs = s.nextIsPs[slot] === 1;
    const demand = isPs ? s.psDemand : s.workerDemand;
    if (s.fits(pool, demand, slot)) {
      s.take(pool, demand, slot);
      if (isPs) s.ps[slot] = (s.ps[slot] ?? 0) + 1;
      else s.workers[slot] = (s.workers[slot] ?? 0) + 1;
      s.time[slot] = s.nextTime[slot] ?? 0;
    }
    if (s.refresh(slot, pool)) s.heap.push(slot);
  }
  states.forEach((state, slot) => {
    state.ps = s.ps[slot] ?? state.ps;
    state.workers = s.workers[slot] ?? state.workers;
    state.time = s.time[slot] ?? state.time;
  });
}
