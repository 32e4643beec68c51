/**
 * A lower bound on the makespan of a trace that no policy can beat: every job must arrive and
 * then run at least its shortest possible time — at the fastest shape the cluster could hold with
 * every other job gone, every worker–PS pair local, and no restart. The bound is the largest
 * arrival + shortest run over the jobs (in practice one of the last arrivals). Reported beside
 * the measured makespans so a reader sees how much any policy could still gain.
 */
import { remoteSpeedFactor } from './locality';
import { resolveWork } from './loss-curve';
import type { MeasuredModel } from './measured-table';
import { resolveSpeed } from './speed-truth';
import type { Trace, TraceJob } from './trace';

export interface MakespanBound {
  /** Seconds from the trace start: max over jobs of arrival + shortest run. */
  readonly bound: number;
  /** The job that sets it. */
  readonly jobId: string;
  readonly lastArrival: number;
}

/** Per-resource cluster totals. */
export function totals(trace: Trace): Map<string, number> {
  const t = new Map<string, number>();
  for (const s of trace.cluster.servers)
    for (const [r, v] of Object.entries(s.capacity)) t.set(r, (t.get(r) ?? 0) + v);
  return t;
}

function fitsCluster(
  job: TraceJob,
  ps: number,
  workers: number,
  total: ReadonlyMap<string, number>,
): boolean {
  const need = new Map<string, number>();
  for (const [r, v] of Object.entries(job.psDemand)) need.set(r, (need.get(r) ?? 0) + v * ps);
  for (const [r, v] of Object.entries(job.workerDemand)) need.set(r, (need.get(r) ?? 0) + v * workers);
  for (const [r, v] of need) if (v > (total.get(r) ?? 0) + 1e-9) return false;
  return true;
}

/** A shape the whole cluster holds, with its speed when every worker–PS pair is local. */
export interface FeasibleShape {
  readonly ps: number;
  readonly workers: number;
  /** Steps per second, placement fully local, no pause. */
  readonly rate: number;
}

/** Every shape within the job's bounds that the cluster's totals hold, at its fully local speed. */
export function* feasibleShapes(
  job: TraceJob,
  measured: ReadonlyMap<string, MeasuredModel>,
  total: ReadonlyMap<string, number>,
): Generator<FeasibleShape> {
  const speed = resolveSpeed(job, measured);
  for (let p = job.minPs; p <= job.maxPs; p++) {
    for (let w = job.minWorkers; w <= job.maxWorkers; w++) {
      if (!fitsCluster(job, p, w, total)) break; // more workers only need more
      yield { ps: p, workers: w, rate: speed.speed(p, w) * remoteSpeedFactor(speed.commShare(p, w), 0) };
    }
  }
}

/** Seconds the job needs at its fastest feasible shape, placement fully local, no pause. */
export function shortestRun(
  job: TraceJob,
  measured: ReadonlyMap<string, MeasuredModel>,
  total: ReadonlyMap<string, number>,
): number {
  const steps = resolveWork(job.work, job.stepsPerEpoch).totalSteps;
  let best = 0;
  for (const s of feasibleShapes(job, measured, total)) best = Math.max(best, s.rate);
  return best > 0 ? steps / best : Infinity;
}

export function makespanBound(trace: Trace, measured: ReadonlyMap<string, MeasuredModel>): MakespanBound {
  const total = totals(trace);
  let out: MakespanBound = { bound: 0, jobId: '', lastArrival: 0 };
  let lastArrival = 0;
  for (const job of trace.jobs) {
    lastArrival = Math.max(lastArrival, job.arrival);
    const end = job.arrival + shortestRun(job, measured, total);
    if (end > out.bound) out = { bound: end, jobId: job.id, lastArrival: 0 };
  }
  return { ...out, lastArrival };
}
