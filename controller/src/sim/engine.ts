/**
 * The trace-driven simulator (ADR 0002, ADR 0009): the shipped runtime — the same ingest, refit,
 * pre-run, round and policy as local mode and Kubernetes — on a simulated backend and virtual time.
 * This driver only moves time from event to event (an arrival, a log line or exit of an emulated
 * program, a timer the runtime set) and submits each trace job when it arrives; between two events
 * every program's speed is constant, so progress is exact.
 */
import { pino } from 'pino';
import type { RuntimeDocument, StateStore } from '../runtime/backend';
import { Controller, type Publisher } from '../runtime/controller';
import { coreOf } from '../runtime/default-core';
import { parseJobSpec, type JobSpec } from '../runtime/job-spec';
import type { Policy } from '../scheduling/types';
import { SIM_PRIOR_EPOCHS } from '../models/convergence/prior';
import type { ExponentialCurve } from '../models/convergence/types';
import { declaredWorkModels, oracleModels, type EstimationModels, type Estimation } from './estimator';
import type { MeasuredModel } from './measured-table';
import { FIXED_WORK_RULE } from './loss-curve';
import { figuresOf, type JobOutcome, type RunFigures, type TimelinePoint } from './metrics';
import { SimBackend, traceJobName } from './sim-backend';
import type { SimCluster } from './sim-executor';
import type { Trace, TraceJob } from './trace';
import { SIM_ORIGIN_MS, VirtualTime } from './virtual-time';

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
  /** Relative noise of each logged speed (default `RECORD_SPEED_NOISE`, 5%). */
  readonly speedNoise?: number;
  /** The runtime's pre-run settings (online estimation; defaults: the runtime's). */
  readonly preRun?: { budget?: number; maxPs?: number; maxWorkers?: number; recordsPerWorker?: number };
  /** Prior for jobs without a convergence fit yet, in epochs (default 20). */
  readonly priorEpochs?: number;
  /** Called after each round with the fraction of jobs finished. */
  readonly onProgress?: (fraction: number) => void;
  /** Full rounds asked for by arrivals and completions run at most this often (default 0). */
  readonly minRoundGapSec?: number;
  /** Record the estimates of this job id each round (for plots). */
  readonly watchJob?: string;
}

export interface WatchedEstimate {
  readonly t: number;
  readonly done: number;
  readonly predictedTotalSteps: number | null;
  readonly beta: readonly [number, number, number] | null;
  /** Set when an exponential gave the prediction (see `ConvergenceEstimate`). */
  readonly exponential?: ExponentialCurve;
}

export interface SimulationResult extends RunFigures {
  readonly jobs: readonly JobOutcome[];
  readonly timeline: readonly TimelinePoint[];
  /** Full (policy) rounds the runtime ran. */
  readonly rounds: number;
  readonly watched: readonly WatchedEstimate[];
  /** Plan actions the simulated cluster refused (a policy asking for what does not fit). */
  readonly failedActions: number;
}

const DEFAULT_INTERVAL = 600;
const DEFAULT_PAUSE = 30;
/** Full rounds in a row with work left, no arrival to come and nothing running: the policy is stuck. */
const MAX_IDLE_ROUNDS = 20;

/** The runtime's job spec of a trace job (its rule and prior; the hidden truth stays in the trainer). */
export function traceJobSpec(
  t: TraceJob,
  rule: { threshold: number; patience: number; stopsJob?: boolean },
  priorEpochs: number,
  declareModel = true,
): JobSpec {
  const parsed = parseJobSpec({
    ...traceJobName(t.id),
    mode: t.mode,
    batchSize: Math.max(1, Math.round(t.globalBatch)),
    // The job type is what its user would declare as the model (ADR 0021).
    ...(declareModel ? { model: t.type } : {}),
    stepsPerEpoch: t.stepsPerEpoch,
    convergence: rule,
    // The runtime's prior is half the user's epoch bound (see runtime/refit.ts remainingWork).
    maxEpochs: Math.max(1, Math.round(priorEpochs * 2)),
    psDemand: t.psDemand,
    workerDemand: t.workerDemand,
    minPs: t.minPs,
    maxPs: t.maxPs,
    minWorkers: t.minWorkers,
    maxWorkers: t.maxWorkers,
  });
  if (!parsed.ok) throw new Error(`trace job ${t.id} is not a valid job: ${parsed.error}`);
  return parsed.spec;
}

const nullStore: StateStore = {
  load: async () => ({ doc: null, records: [] }),
  appendRecord: () => {},
  saveDocument: async (_doc: RuntimeDocument) => {},
  close: async () => {},
};
const nullPublisher: Publisher = { publish: async () => {}, discards: true };

/** Runs one simulation to the last job's completion. */
export async function simulate(o: SimulationOptions): Promise<SimulationResult> {
  const interval = o.intervalSec ?? DEFAULT_INTERVAL;
  const pause = o.restartPauseSec ?? DEFAULT_PAUSE;
  const time = new VirtualTime();
  let controller: Controller | null = null;
  const backend = new SimBackend({
    trace: o.trace,
    measured: o.measured,
    seed: o.seed,
    restartPauseSec: pause,
    now: () => time.seconds,
    wallMs: () => time.clock.wallMs(),
    sink: (task, record) => controller?.ingestRecord(task, record),
    ...(o.policy.parameterAssignment ? { assignment: o.policy.parameterAssignment } : {}),
    ...(o.speedNoise === undefined ? {} : { speedNoise: o.speedNoise }),
  });
  // Whoever knows the speeds needs no pre-run (and pays for none); known remaining work alone does not.
  const speedsKnown = o.estimation.kind === 'oracle' && o.estimation.knows !== 'work';
  const core = coreOf(o.policy, {
    estimateConvergence: (p, r) => o.models.estimateConvergence(p, r),
    fitSpeed: (s, opts) => o.models.fitSpeed(s, opts),
    ...(o.estimation.kind === 'oracle'
      ? { models: oracleModels(backend.trainers, o.estimation.error, o.seed, o.estimation.knows) }
      : o.estimation.declaredEpochs
        ? { models: declaredWorkModels(backend.trainers) }
        : {}),
  });
  const ctl = new Controller({
    core,
    backend,
    store: nullStore,
    publisher: nullPublisher,
    clock: () => time.clock,
    timers: time.timers,
    log: pino({ level: 'silent' }),
    id: 'simulator',
    schedulingIntervalSec: interval,
    restartCostSec: pause,
    preRun: { ...o.preRun, ...(speedsKnown ? { budget: 0 } : {}) },
    rolloutConcurrency: Number.MAX_SAFE_INTEGER,
    minRoundGapSec: o.minRoundGapSec ?? 0,
  });
  controller = ctl;
  await ctl.start();
  return drive({ o, time, backend, ctl });
}

interface DriveContext {
  readonly o: SimulationOptions;
  readonly time: VirtualTime;
  readonly backend: SimBackend;
  readonly ctl: Controller;
}

async function drive(c: DriveContext): Promise<SimulationResult> {
  const { o, time, backend, ctl } = c;
  const priorEpochs = o.priorEpochs ?? SIM_PRIOR_EPOCHS;
  const declareModels = !(o.estimation.kind === 'online' && o.estimation.anonymous);
  const arrivals = [...o.trace.jobs].sort((a, b) => a.arrival - b.arrival || a.id.localeCompare(b.id));
  const timeline: TimelinePoint[] = [];
  const watched: WatchedEstimate[] = [];
  const capacity = totalCapacity(o.trace);
  let allocationChanged = true;
  backend.cluster.onApplied = () => (allocationChanged = true);
  let next = 0;
  let idleSince: number | null = null;
  let lastDecisions = -1;
  for (;;) {
    await ctl.settled();
    if (allocationChanged) {
      timeline.push(usagePoint(backend.cluster, capacity, time.seconds));
      allocationChanged = false;
    }
    if (ctl.decisionCount !== lastDecisions) {
      lastDecisions = ctl.decisionCount;
      if (o.watchJob) watch(ctl, backend, o.watchJob, time.seconds, watched);
      o.onProgress?.(finishedFraction(ctl, arrivals.length));
    }
    if (next >= arrivals.length && backend.cluster.running.size === 0 && ctl.allDone()) break;
    idleSince = checkStall(ctl, backend, next < arrivals.length, idleSince, o.policy.name, time.seconds);
    const t = Math.min(
      arrivals[next]?.arrival ?? Infinity,
      time.nextTimerAt(),
      backend.nextEventAt(time.seconds),
    );
    if (!Number.isFinite(t))
      throw new Error(`simulation stalled at t=${time.seconds}: nothing left to happen`);
    const from = time.seconds;
    time.moveTo(t);
    backend.advance(from, time.seconds);
    time.fireDue();
    while ((arrivals[next]?.arrival ?? Infinity) <= time.seconds) {
      const job = arrivals[next++]!;
      const rule = ruleOf(job);
      await ctl.submit(traceJobSpec(job, rule, priorEpochs, declareModels));
    }
  }
  o.onProgress?.(1);
  await ctl.stop();
  return results(ctl, backend, { timeline, watched, intervalSec: o.intervalSec ?? DEFAULT_INTERVAL });
}

/**
 * The convergence rule the job's user set: the trace's, or for fixed work (epochs, steps) the one
 * rule every such job shares (`FIXED_WORK_RULE`), which only predicts — the job ends when its
 * program does. Nothing in it depends on the job's work: the runtime learns that from the loss.
 */
export function ruleOf(job: TraceJob): { threshold: number; patience: number; stopsJob?: boolean } {
  if (job.work.kind === 'loss-curve') return { threshold: job.work.threshold, patience: job.work.patience };
  return { threshold: FIXED_WORK_RULE.threshold, patience: FIXED_WORK_RULE.patience, stopsJob: false };
}

function checkStall(
  ctl: Controller,
  backend: SimBackend,
  arrivalsLeft: boolean,
  idleSince: number | null,
  policy: string,
  now: number,
): number | null {
  if (backend.cluster.running.size > 0 || arrivalsLeft || ctl.allDone()) return null;
  const since = idleSince ?? ctl.decisionCount;
  if (ctl.decisionCount - since > MAX_IDLE_ROUNDS) {
    const waiting = ctl
      .list()
      .filter((j) => j['phase'] !== 'done' && j['phase'] !== 'failed')
      .map((j) => `${String(j['id'])}: ${String(j['reason'] ?? j['phase'])}`);
    throw new Error(
      `simulation stalled at t=${now}: ${policy} runs none of the ${waiting.length} job(s) left (${waiting.slice(0, 3).join('; ')})`,
    );
  }
  return since;
}

function finishedFraction(ctl: Controller, total: number): number {
  const done = ctl.records().filter((r) => r.phase === 'done' || r.phase === 'failed').length;
  return total > 0 ? done / total : 1;
}

function results(
  ctl: Controller,
  backend: SimBackend,
  run: {
    readonly timeline: readonly TimelinePoint[];
    readonly watched: readonly WatchedEstimate[];
    readonly intervalSec: number;
  },
): SimulationResult {
  const { timeline, watched } = run;
  const byId = new Map(backend.trainers);
  const jobs: JobOutcome[] = ctl.records().map((r) => {
    const id = `${r.spec.namespace}/${r.spec.name}`;
    const trace = byId.get(id)?.o.job;
    const finish = r.finishedAt ?? NaN;
    const since = r.spans[0]?.since;
    return {
      id: trace?.id ?? id,
      type: trace?.type ?? 'unknown',
      mode: r.spec.mode,
      arrival: r.submittedAt,
      finish,
      jct: finish - r.submittedAt,
      restarts: backend.cluster.jobs.get(id)?.restarts ?? 0,
      firstStart: since === undefined ? null : (since - SIM_ORIGIN_MS) / 1000,
    };
  });
  const failedActions = backend.cluster.failedActions;
  const figures = figuresOf(jobs, timeline, run.intervalSec);
  return { ...figures, jobs, timeline, rounds: ctl.decisionCount, watched, failedActions };
}

function watch(
  ctl: Controller,
  backend: SimBackend,
  traceId: string,
  now: number,
  out: WatchedEstimate[],
): void {
  const name = traceJobName(traceId);
  const id = `${name.namespace}/${name.name}`;
  const trainer = backend.trainers.get(id);
  if (!trainer) return;
  const c = ctl.modelsOf(id)?.convergence;
  out.push({
    t: now,
    done: trainer.done,
    predictedTotalSteps: c?.status === 'ok' ? c.predictedTotalSteps : null,
    beta: c?.status === 'ok' ? c.beta : null,
    ...(c?.status === 'ok' && c.exponential !== undefined ? { exponential: c.exponential } : {}),
  });
}

const GPU = 'nvidia.com/gpu';
const UTIL_RESOURCES = ['cpu', 'memory', GPU] as const;

function totalCapacity(trace: Trace): Record<string, number> {
  const cap: Record<string, number> = {};
  for (const s of trace.cluster.servers)
    for (const [r, v] of Object.entries(s.capacity)) cap[r] = (cap[r] ?? 0) + v;
  return cap;
}

function usagePoint(cluster: SimCluster, capacity: Record<string, number>, t: number): TimelinePoint {
  const used: Record<string, number> = {};
  for (const s of cluster.servers)
    for (const [r, v] of Object.entries(cluster.usage(s.name))) used[r] = (used[r] ?? 0) + v;
  const shares = UTIL_RESOURCES.filter((r) => (capacity[r] ?? 0) > 0).map(
    (r) => (used[r] ?? 0) / (capacity[r] ?? 1),
  );
  const gpus = capacity[GPU] ?? 0;
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
    gpuUtilization: gpus > 0 ? (used[GPU] ?? 0) / gpus : 0,
  };
}
