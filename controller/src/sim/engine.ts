/**
 * The event-driven simulator (ADR 0002): between two events every running job's speed is constant, so
 * progress and finish times are computed exactly. Events: arrivals, finishes, scheduling ticks. Each round
 * is the production loop — report → snapshot → policy.decide → planChanges → executor.execute.
 */
import { planChanges, type CurrentJob } from '../planning/plan';
import type { JobShape, JobSnapshot, Policy, PolicyInput } from '../scheduling/types';
import { createEstimator, type EstimationModels, type Estimation } from './estimator';
import { resolveWork } from './loss-curve';
import type { MeasuredModel } from './measured-table';
import { figuresOf, type JobOutcome, type RunFigures, type TimelinePoint } from './metrics';
import { SimCluster } from './sim-executor';
import { advance, finishTime, prerun, report, type SimJob } from './sim-job';
import { resolveSpeed } from './speed-truth';
import type { Trace, TraceJob } from './trace';

export interface SimulationOptions {
  readonly trace: Trace;
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  readonly policy: Policy;
  readonly estimation: Estimation;
  readonly models: EstimationModels;
  /** Seed of the observation noise (the workload has its own). */
  readonly seed: number;
  /** Seconds between scheduling rounds (default 600, the paper's). */
  readonly intervalSec?: number;
  /** Seconds a checkpoint → restart costs (default 30). */
  readonly restartPauseSec?: number;
  /** Shapes of the pre-run of a new job (online estimation only). */
  readonly prerunShapes?: (job: TraceJob) => readonly JobShape[];
  /** Prior for jobs without loss data yet, in epochs (default 20). */
  readonly priorEpochs?: number;
  /** Called after each round with the fraction of jobs finished. */
  readonly onProgress?: (fraction: number) => void;
  /**
   * Arrivals and finishes trigger a round at most this often (default 0: immediately). Large workloads
   * use a gap so that a burst of events costs one policy call, as a real controller batches its queue.
   */
  readonly minRoundGapSec?: number;
  /** Record the estimates of this job id each round (for plots). */
  readonly watchJob?: string;
}

export interface WatchedEstimate {
  readonly t: number;
  readonly done: number;
  readonly predictedTotalSteps: number | null;
  readonly beta: readonly [number, number, number] | null;
}

export interface SimulationResult extends RunFigures {
  readonly jobs: readonly JobOutcome[];
  readonly timeline: readonly TimelinePoint[];
  readonly rounds: number;
  readonly watched: readonly WatchedEstimate[];
}

const DEFAULT_INTERVAL = 600;
const DEFAULT_PAUSE = 30;
/** Rounds in a row with work left, no arrival to come and nothing running: the policy is stuck. */
const MAX_IDLE_ROUNDS = 20;
/** Seconds between two reports of one job's sidecar data to the estimators. */
const REPORT_EVERY_SEC = 60;

function makeJob(t: TraceJob, o: SimulationOptions): SimJob {
  const truth = resolveWork(t.work, t.stepsPerEpoch);
  const speed = resolveSpeed(t, o.measured);
  const estimator = createEstimator({
    job: {
      id: t.id,
      mode: t.mode,
      globalBatch: t.globalBatch,
      rule: {
        stepsPerEpoch: t.stepsPerEpoch,
        threshold: truth.convergence.threshold,
        patience: truth.convergence.patience,
      },
      trueTotalSteps: truth.totalSteps,
      trueSpeed: speed.speed,
      priorEpochs: o.priorEpochs ?? 20,
    },
    estimation: o.estimation,
    models: o.models,
    seed: o.seed,
  });
  const job: SimJob = {
    trace: t,
    truth,
    speed,
    estimator,
    done: 0,
    reportedStep: 0,
    segment: { steps: 0, seconds: 0 },
    reports: 0,
    lastReport: -Infinity,
    finish: null,
  };
  if (o.estimation.kind === 'online' && o.prerunShapes) prerun(job, o.prerunShapes(t), o.seed);
  return job;
}

/** Runs one simulation to the last job's completion. */
export async function simulate(o: SimulationOptions): Promise<SimulationResult> {
  const interval = o.intervalSec ?? DEFAULT_INTERVAL;
  const pause = o.restartPauseSec ?? DEFAULT_PAUSE;
  const cluster = new SimCluster(o.trace.cluster.servers, pause);
  const pending = [...o.trace.jobs].sort((a, b) => a.arrival - b.arrival || a.id.localeCompare(b.id));
  const active = new Map<string, SimJob>();
  const outcomes: JobOutcome[] = [];
  const timeline: TimelinePoint[] = [];
  const watched: WatchedEstimate[] = [];
  const total = pending.length;
  let next = 0;
  let now = 0;
  let nextTick = 0;
  let rounds = 0;
  let idleRounds = 0;
  let lastRound = -Infinity;
  let eventRoundAt = Infinity;
  const gap = o.minRoundGapSec ?? 0;
  const capacity = totalCapacity(o.trace);

  while (next < pending.length || active.size > 0) {
    const t = nextEventTime({
      cluster,
      active,
      now,
      arrival: pending[next]?.arrival ?? Infinity,
      round: Math.min(nextTick, eventRoundAt),
    });
    for (const job of active.values()) advance(job, state(cluster, job), now, t);
    now = t;
    cluster.now = now;
    let changed = false;
    while ((pending[next]?.arrival ?? Infinity) <= now) {
      admit(pending[next++] as TraceJob, o, cluster, active);
      changed = true;
    }
    if (retireFinished(cluster, active, now, outcomes)) changed = true;
    if (changed) eventRoundAt = Math.min(eventRoundAt, Math.max(now, lastRound + gap));
    const tick = now >= nextTick;
    if (tick) nextTick = (Math.floor(now / interval) + 1) * interval;
    if ((tick || now >= eventRoundAt) && active.size > 0) {
      await round({ o, cluster, active, now, pause });
      rounds++;
      lastRound = now;
      eventRoundAt = Infinity;
      if (o.watchJob) watch(o.watchJob, active, now, watched);
      o.onProgress?.(outcomes.length / total);
    }
    const usage = snapshotUsage(cluster, capacity, now);
    timeline.push(usage);
    idleRounds = usage.runningJobs === 0 && next >= pending.length ? idleRounds + 1 : 0;
    if (idleRounds > MAX_IDLE_ROUNDS) {
      throw new Error(
        `simulation stalled at t=${now}: ${o.policy.name} runs none of the ${active.size} job(s) left`,
      );
    }
  }
  o.onProgress?.(1);
  return { ...figuresOf(outcomes, timeline), jobs: outcomes, timeline, rounds, watched };
}

/** The time of the next event: an arrival, a finish, or a due round (only while jobs are active). */
function nextEventTime(c: {
  cluster: SimCluster;
  active: ReadonlyMap<string, SimJob>;
  now: number;
  arrival: number;
  round: number;
}): number {
  let t = c.arrival;
  for (const job of c.active.values()) t = Math.min(t, finishTime(job, state(c.cluster, job), c.now));
  if (c.active.size > 0) t = Math.min(t, c.round);
  if (!Number.isFinite(t))
    throw new Error(`simulation stalled at t=${c.now}: ${c.active.size} job(s) can never run`);
  return Math.max(c.now, t);
}

function admit(spec: TraceJob, o: SimulationOptions, cluster: SimCluster, active: Map<string, SimJob>): void {
  active.set(spec.id, makeJob(spec, o));
  cluster.submit({ id: spec.id, psDemand: spec.psDemand, workerDemand: spec.workerDemand });
}

/** Removes the jobs that reached their total steps; true when any did. */
function retireFinished(
  cluster: SimCluster,
  active: Map<string, SimJob>,
  now: number,
  out: JobOutcome[],
): boolean {
  let any = false;
  for (const job of [...active.values()]) {
    if (job.done < job.truth.totalSteps - 1e-6) continue;
    const { id, type, mode, arrival } = job.trace;
    out.push({
      id,
      type,
      mode,
      arrival,
      finish: now,
      jct: now - arrival,
      restarts: state(cluster, job).restarts,
    });
    cluster.finish(id);
    active.delete(id);
    any = true;
  }
  return any;
}

function state(cluster: SimCluster, job: SimJob) {
  const s = cluster.jobs.get(job.trace.id);
  if (!s) throw new Error(`job ${job.trace.id} is not on the cluster`);
  return s;
}

interface RoundContext {
  readonly o: SimulationOptions;
  readonly cluster: SimCluster;
  readonly active: ReadonlyMap<string, SimJob>;
  readonly now: number;
  readonly pause: number;
}

/** One scheduling round: sidecar reports, snapshot, decision, plan, execution. */
async function round(c: RoundContext): Promise<void> {
  const jobs: JobSnapshot[] = [];
  const current = new Map<string, CurrentJob | null>();
  for (const job of c.active.values()) {
    const st = state(c.cluster, job);
    // Sidecar data is batched: a job reports at most once per REPORT_EVERY_SEC.
    if (c.now - job.lastReport >= REPORT_EVERY_SEC) {
      report(job, st, c.o.seed);
      job.lastReport = c.now;
    }
    const t = job.trace;
    const run = st.shape ? { shape: st.shape, placement: st.placement } : null;
    current.set(t.id, run);
    jobs.push({
      id: t.id,
      mode: t.mode,
      psDemand: t.psDemand,
      workerDemand: t.workerDemand,
      minPs: t.minPs,
      maxPs: t.maxPs,
      minWorkers: t.minWorkers,
      maxWorkers: t.maxWorkers,
      arrivalTime: t.arrival,
      current: run,
      remaining: job.estimator.remaining(job.done),
      speed: job.estimator.speed(),
    });
  }
  const input: PolicyInput = {
    now: c.now,
    servers: c.cluster.servers.map((s) => ({ name: s.name, capacity: s.capacity, reserved: {} })),
    jobs,
    restartCostSec: c.pause,
  };
  const decision = c.o.policy.decide(input);
  const result = await c.cluster.execute(planChanges(current, decision));
  if (result.failed.length > 0) {
    const f = result.failed[0];
    throw new Error(
      `policy ${c.o.policy.name} produced an infeasible plan: ${f?.action.kind} ${f?.action.jobId}: ${f?.error}`,
    );
  }
}

function watch(id: string, active: ReadonlyMap<string, SimJob>, now: number, out: WatchedEstimate[]): void {
  const job = active.get(id);
  if (!job) return;
  const e = job.estimator.lastEstimate();
  out.push({
    t: now,
    done: job.done,
    predictedTotalSteps: e?.status === 'ok' ? e.predictedTotalSteps : null,
    beta: e?.status === 'ok' ? e.beta : null,
  });
}

const UTIL_RESOURCES = ['cpu', 'memory', 'nvidia.com/gpu'] as const;

function totalCapacity(trace: Trace): Record<string, number> {
  const cap: Record<string, number> = {};
  for (const s of trace.cluster.servers)
    for (const [r, v] of Object.entries(s.capacity)) cap[r] = (cap[r] ?? 0) + v;
  return cap;
}

function snapshotUsage(cluster: SimCluster, capacity: Record<string, number>, t: number): TimelinePoint {
  const used: Record<string, number> = {};
  for (const s of cluster.servers)
    for (const [r, v] of Object.entries(cluster.usage(s.name))) used[r] = (used[r] ?? 0) + v;
  const shares = UTIL_RESOURCES.filter((r) => (capacity[r] ?? 0) > 0).map(
    (r) => (used[r] ?? 0) / (capacity[r] ?? 1),
  );
  let runningTasks = 0;
  let runningJobs = 0;
  for (const j of cluster.jobs.values()) {
    if (!j.shape) continue;
    runningJobs++;
    runningTasks += j.shape.ps + j.shape.workers;
  }
  return {
    t,
    runningTasks,
    runningJobs,
    utilization: shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : 0,
  };
}
