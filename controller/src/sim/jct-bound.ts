/**
 * Lower bounds on a trace's average JCT that no policy can beat, reported beside the measured
 * averages (like the makespan bound) so a reader sees how much room is left for any scheduler.
 *
 * 1. Alone: each job runs at least its shortest possible time (`shortestRun`: the fastest shape
 *    the whole cluster holds, every pair local, no restart), so the average JCT is at least the
 *    average shortest run.
 * 2. Shared (per resource): a job that runs shape s for its whole time T_s occupies
 *    usage_r(s)·T_s of resource r; mixing shapes cannot use less than the smallest such area, a_j.
 *    At any moment the jobs together use at most the cluster's total R of r. So every schedule is
 *    also a preemptive schedule of job sizes a_j on one machine of speed R (a job is "done" there
 *    once its area is spent, no later than it really ends), and on one machine shortest remaining
 *    processing time first minimises the sum of completion times (Schrage 1968). Its average JCT
 *    bounds every policy's; the largest over resources is reported.
 *
 * Both relax the cluster (no fragmentation, no placement, no minimum shapes, free preemption), so
 * they are loose; a measured average close to one of them cannot be improved much by anyone.
 */
import { BinaryHeap } from '../scheduling/core/heap';
import { resolveWork } from './loss-curve';
import type { MeasuredModel } from './measured-table';
import { feasibleShapes, shortestRun, totals } from './makespan-bound';
import type { Trace, TraceJob } from './trace';

export interface JctBound {
  /** Average JCT no policy can beat: the larger of `alone` and `shared`. */
  readonly bound: number;
  /** Average of the jobs' shortest runs. */
  readonly alone: number;
  /** Largest over resources of the one-machine SRPT average JCT. */
  readonly shared: number;
  /** The resource that sets `shared`. */
  readonly resource: string;
}

/** Per resource, the smallest usage × time over the job's feasible shapes (Infinity if none fits). */
export function minimumAreas(
  job: TraceJob,
  measured: ReadonlyMap<string, MeasuredModel>,
  total: ReadonlyMap<string, number>,
): Map<string, number> {
  const steps = resolveWork(job.work, job.stepsPerEpoch).totalSteps;
  const resources = new Set([...Object.keys(job.psDemand), ...Object.keys(job.workerDemand)]);
  const areas = new Map<string, number>([...resources].map((r) => [r, Infinity]));
  for (const s of feasibleShapes(job, measured, total)) {
    if (!(s.rate > 0)) continue;
    for (const r of resources) {
      const use = (job.psDemand[r] ?? 0) * s.ps + (job.workerDemand[r] ?? 0) * s.workers;
      areas.set(r, Math.min(areas.get(r) ?? Infinity, (use * steps) / s.rate));
    }
  }
  return areas;
}

/**
 * Mean of (completion − arrival) under preemptive SRPT on one machine of speed `capacity`: an
 * exact event simulation (each arrival or completion is one event), O(n log n).
 */
export function srptMeanFlow(jobs: readonly { arrival: number; size: number }[], capacity: number): number {
  if (jobs.length === 0) return 0;
  const order = [...jobs].sort((a, b) => a.arrival - b.arrival);
  const present = new BinaryHeap<{ left: number; arrival: number }>((a, b) => a.left < b.left);
  let t = -Infinity;
  let i = 0;
  let flow = 0;
  while (i < order.length || present.size > 0) {
    const next = i < order.length ? order[i]!.arrival : Infinity;
    const head = present.pop();
    if (head === undefined) {
      t = next; // idle until the next arrival
    } else if (t + head.left / capacity <= next) {
      t += head.left / capacity;
      flow += t - head.arrival;
      continue;
    } else {
      present.push({ left: head.left - (next - t) * capacity, arrival: head.arrival });
      t = next;
    }
    while (i < order.length && order[i]!.arrival <= t) {
      const job = order[i++]!;
      present.push({ left: job.size, arrival: job.arrival });
    }
  }
  return flow / jobs.length;
}

export function jctBound(trace: Trace, measured: ReadonlyMap<string, MeasuredModel>): JctBound {
  const total = totals(trace);
  const n = Math.max(trace.jobs.length, 1);
  const alone = trace.jobs.reduce((s, j) => s + shortestRun(j, measured, total), 0) / n;
  const perResource = new Map<string, { arrival: number; size: number }[]>();
  for (const job of trace.jobs) {
    for (const [r, area] of minimumAreas(job, measured, total)) {
      if (!Number.isFinite(area) || area <= 0) continue;
      const list = perResource.get(r) ?? [];
      list.push({ arrival: job.arrival, size: area });
      perResource.set(r, list);
    }
  }
  let shared = 0;
  let resource = '';
  for (const [r, jobs] of perResource) {
    const capacity = total.get(r) ?? 0;
    if (!(capacity > 0)) continue;
    // Jobs that do not use r finish there at once (flow 0), so they count in the average.
    const mean = (srptMeanFlow(jobs, capacity) * jobs.length) / n;
    if (mean > shared) {
      shared = mean;
      resource = r;
    }
  }
  return { bound: Math.max(alone, shared), alone, shared, resource };
}
