/** Figures of a simulation run: JCTs, makespan, restarts and a utilisation integral over time. */

/** One finished job. */
export interface JobOutcome {
  readonly id: string;
  readonly type: string;
  readonly mode: 'sync' | 'async';
  readonly arrival: number;
  readonly finish: number;
  readonly jct: number;
  readonly restarts: number;
  /** Seconds when the job first held resources (its pre-run included); null if it never did. */
  readonly firstStart: number | null;
}

/** One point of the timeline (state right after an event). */
export interface TimelinePoint {
  readonly t: number;
  readonly runningTasks: number;
  readonly runningJobs: number;
  /** Mean over cpu, memory and GPUs of the allocated share of the cluster's capacity. */
  readonly utilization: number;
  /** Allocated share of the cluster's GPUs (0 on a cluster without GPUs). */
  readonly gpuUtilization: number;
}

/** The figures of the `simulate --json` contract for one run. */
export interface RunFigures {
  readonly avgJct: number;
  readonly p95Jct: number;
  readonly makespan: number;
  readonly restarts: number;
  readonly utilization: number;
  /** Time-weighted mean allocated share of the GPUs (0 without GPUs). */
  readonly gpuUtilization: number;
  /** The longest a job waited from its arrival to first holding resources (seconds). */
  readonly maxStartWait: number;
  /** Jobs that first held resources more than one scheduling interval after they arrived. */
  readonly lateStarts: number;
}

/** Nearest-rank percentile of a non-empty list. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? 0;
}

/** Time-weighted mean utilisation over [0, end] of a step function given at event times. */
export function meanUtilization(
  timeline: readonly TimelinePoint[],
  end: number,
  field: 'utilization' | 'gpuUtilization' = 'utilization',
): number {
  if (end <= 0) return 0;
  let area = 0;
  for (let i = 0; i < timeline.length; i++) {
    const p = timeline[i];
    if (!p) continue;
    const next = Math.min(timeline[i + 1]?.t ?? end, end);
    area += p[field] * Math.max(0, next - p.t);
  }
  return area / end;
}

/**
 * Figures of one run. Makespan is measured from time 0 (the trace start) to the last finish; a
 * start is late when it comes more than `intervalSec` (one scheduling round) after the arrival.
 */
export function figuresOf(
  jobs: readonly JobOutcome[],
  timeline: readonly TimelinePoint[],
  intervalSec = Infinity,
): RunFigures {
  const jcts = jobs.map((j) => j.jct);
  const makespan = jobs.reduce((m, j) => Math.max(m, j.finish), 0);
  const waits = jobs.map((j) => (j.firstStart ?? j.finish) - j.arrival);
  return {
    avgJct: jcts.length ? jcts.reduce((a, b) => a + b, 0) / jcts.length : 0,
    p95Jct: jcts.length ? percentile(jcts, 0.95) : 0,
    makespan,
    restarts: jobs.reduce((s, j) => s + j.restarts, 0),
    utilization: meanUtilization(timeline, makespan),
    gpuUtilization: meanUtilization(timeline, makespan, 'gpuUtilization'),
    maxStartWait: waits.reduce((m, w) => Math.max(m, w), 0),
    lateStarts: waits.filter((w) => w > intervalSec).length,
  };
}
