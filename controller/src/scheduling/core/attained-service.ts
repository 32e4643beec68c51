/**
 * Attained service and the discretised priority queues of Tiresias's 2D-LAS (Gu et al., NSDI 2019,
 * §4.2), derived from a job's run history alone, so the policy that reads them keeps no state:
 * replaying the same history always gives the same queue.
 *
 * - Service is two-dimensional: GPUs held × time held (GPU-seconds), summed since the job arrived
 *   or was last promoted.
 * - Queue q holds the jobs whose service lies in [thresholds[q-1], thresholds[q]); a job is demoted
 *   the moment its service crosses a threshold and is never demoted back by waiting.
 * - Starvation (the paper's STARVELIMIT = PROMOTEKNOB × execution time; the rule of the authors'
 *   simulator, SymbioticLab/Tiresias `run_sim.py`): a demoted job that has run is promoted to the
 *   first queue, its service and counters reset, once the time it waited since its last promotion
 *   reaches `promoteKnob` × the time it ran since then. `promoteKnob` 0 turns promotion off.
 * - Within a queue, jobs go in the order they entered it (arrival, demotion or promotion time),
 *   as the queues of the authors' simulator and of Pollux's port (petuum/adaptdl) are lists
 *   appended to in that order.
 */
import type { JobShape, RunSpan } from '../types';

export interface LasParameters {
  /** Ascending service thresholds in GPU-seconds; there are `thresholds.length + 1` queues. */
  readonly thresholds: readonly number[];
  /** STARVELIMIT = promoteKnob × execution time since the last promotion; 0: never promote. */
  readonly promoteKnob: number;
}

export interface LasState {
  /** 0 is the highest priority. */
  readonly queue: number;
  /** Seconds (the `now` clock) when the job entered its queue. */
  readonly enteredAt: number;
  /** GPU-seconds attained since arrival or the last promotion. */
  readonly service: number;
}

export interface LasJob {
  readonly arrival: number;
  readonly runs: readonly RunSpan[];
  /** GPUs the job holds at a shape (a worker that asks for no GPU counts as one: it does the work). */
  readonly gpus: (shape: JobShape) => number;
}

interface Replay {
  queue: number;
  enteredAt: number;
  service: number;
  executed: number;
  waited: number;
}

/** The job's queue at `now`, replaying its history from its arrival. Pure. */
export function lasState(job: LasJob, now: number, p: LasParameters): LasState {
  const r: Replay = { queue: 0, enteredAt: job.arrival, service: 0, executed: 0, waited: 0 };
  let t = job.arrival;
  const runs = [...job.runs].sort((a, b) => a.from - b.from);
  for (const run of runs) {
    const from = Math.max(t, Math.min(run.from, now));
    const to = Math.min(now, Math.max(from, run.to ?? now));
    wait(r, t, from, p);
    serve(r, from, to, job.gpus(run.shape), p);
    t = Math.max(t, to);
  }
  wait(r, t, now, p);
  return { queue: r.queue, enteredAt: r.enteredAt, service: r.service };
}

/** GPU-seconds accrue; each threshold crossed demotes the job at the moment it is crossed. */
function serve(r: Replay, from: number, to: number, gpus: number, p: LasParameters): void {
  if (!(to > from)) return;
  const rate = Math.max(gpus, 0);
  for (let q = r.queue; q < p.thresholds.length && rate > 0; q++) {
    const limit = p.thresholds[q] ?? Infinity;
    const crossAt = from + (limit - r.service) / rate;
    if (crossAt > to) break;
    r.queue = q + 1;
    r.enteredAt = Math.max(from, crossAt);
  }
  r.service += rate * (to - from);
  r.executed += to - from;
}

/** Waiting after having run counts towards STARVELIMIT; reaching it promotes to the first queue. */
function wait(r: Replay, from: number, to: number, p: LasParameters): void {
  if (!(to > from) || r.executed <= 0) return;
  if (p.promoteKnob > 0 && r.queue > 0) {
    const promoteAt = from + Math.max(0, p.promoteKnob * r.executed - r.waited);
    if (promoteAt <= to) {
      Object.assign(r, { queue: 0, enteredAt: promoteAt, service: 0, executed: 0, waited: 0 });
      return;
    }
  }
  r.waited += to - from;
}
