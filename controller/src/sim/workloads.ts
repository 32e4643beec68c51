/**
 * Built-in workloads, generated from a seed as traces: `paper` (the paper's testbed, §6), `all-sync`,
 * `all-async`, `poisson`, `bursty` and `large`. Job sizes are calibrated so JCTs fall in the paper's
 * range (see docs/adr/0002-simulator-time.md, "Calibration").
 */
import { GiB } from '../../../shared/src/units';
import type { TrainingMode } from '../models/speed/types';
import { resnet50Blocks } from '../scheduling/paa/resnet50';
import { convergenceEpoch } from './loss-curve';
import type { MeasuredModel } from './measured-table';
import { createRng, type Rng } from './rng';
import { resolveSpeed } from './speed-truth';
import type { LossCurve, Trace, TraceJob, TraceServer } from './trace';

export const WORKLOAD_NAMES = [
  'paper',
  'all-sync',
  'all-async',
  'poisson',
  'bursty',
  'large',
  'stragglers',
] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];
export const isWorkloadName = (s: string): s is WorkloadName =>
  (WORKLOAD_NAMES as readonly string[]).includes(s);

/** Options of {@link buildWorkload}. */
export interface WorkloadOptions {
  readonly seed: number;
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  /** Number of jobs (default 60, `large` 2,000). */
  readonly jobs?: number;
}

/** Work of a job at its reference shape (1 PS, 1 worker), log-uniform in seconds: the calibration knob. */
export const REFERENCE_WORK_SEC = { min: 900, max: 5400 } as const;

/** The paper's testbed: 7 CPU servers (16 cores, 80 GB) and 6 GPU servers (8 cores, 2 GPUs, 48 GB). */
export function paperServers(scale = 1): TraceServer[] {
  const cpu = Array.from({ length: 7 * scale }, (_, i) => ({
    name: `cpu-${i + 1}`,
    capacity: { cpu: 16, memory: 80 * GiB },
  }));
  const gpu = Array.from({ length: 6 * scale }, (_, i) => ({
    name: `gpu-${i + 1}`,
    capacity: { cpu: 8, memory: 48 * GiB, 'nvidia.com/gpu': 2 },
  }));
  return [...cpu, ...gpu];
}

function sampleCurve(rng: Rng): LossCurve {
  const beta0 = rng.uniform(0.15, 1.2);
  const beta1 = rng.uniform(0.8, 1.6);
  const beta2 = rng.uniform(0.02, 0.3);
  const u = rng.next();
  if (u < 0.55) return { kind: 'inverse', beta0, beta1, beta2 };
  if (u < 0.7)
    return {
      kind: 'lr-drop',
      beta0,
      beta1,
      beta2,
      dropEpoch: rng.uniform(3, 10),
      dropFraction: rng.uniform(0.2, 0.5),
    };
  if (u < 0.85) return { kind: 'plateau', beta0, beta1, beta2, plateauEpochs: rng.uniform(1, 3) };
  return {
    kind: 'exponential',
    a: rng.uniform(0.6, 1.2),
    tau: rng.uniform(3, 15),
    c: rng.uniform(0.02, 0.3),
  };
}

/** A job type: a measured model or a synthetic one with parametric (Eq. 3/4) speed. */
interface JobType {
  readonly name: string;
  readonly globalBatch: number;
  readonly maxPs: number;
  readonly maxWorkers: number;
  readonly speed: TraceJob['speed'];
}

function measuredTypes(measured: ReadonlyMap<string, MeasuredModel>): JobType[] {
  return [...measured.values()].map((m) => ({
    name: m.model,
    globalBatch: m.globalBatch,
    maxPs: m.maxPs,
    maxWorkers: m.maxWorkers,
    speed: { kind: 'measured', model: m.model },
  }));
}

function syntheticType(rng: Rng, index: number): JobType {
  const theta = [
    rng.uniform(0.002, 0.01),
    rng.uniform(0.05, 0.3),
    rng.uniform(0.05, 0.4),
    rng.uniform(0.005, 0.04),
    rng.uniform(0.005, 0.03),
  ];
  return {
    name: `synthetic-${index}`,
    globalBatch: 64,
    maxPs: 16,
    maxWorkers: 16,
    speed: { kind: 'parametric', theta },
  };
}

interface JobSpec {
  readonly index: number;
  readonly arrival: number;
  readonly type: JobType;
  readonly mode: TrainingMode;
}

function makeJob(spec: JobSpec, rng: Rng, measured: ReadonlyMap<string, MeasuredModel>): TraceJob {
  const { type, mode } = spec;
  // Async θ has 4 entries (no separate batch term): drop θ0·M into the constant for synthetic async types.
  const speed: TraceJob['speed'] =
    type.speed.kind === 'parametric' && mode === 'async'
      ? {
          kind: 'parametric',
          theta: [
            (type.speed.theta[0] ?? 0) * type.globalBatch + (type.speed.theta[1] ?? 0),
            ...type.speed.theta.slice(2),
          ],
        }
      : type.speed;
  let curve = sampleCurve(rng);
  const threshold = rng.uniform(0.01, 0.05);
  const patience = 3;
  let epochs = convergenceEpoch({ curve, threshold, patience, noise: 0 }, 400);
  for (let tries = 0; (epochs < 6 || epochs > 200) && tries < 50; tries++) {
    curve = sampleCurve(rng);
    epochs = convergenceEpoch({ curve, threshold, patience, noise: 0 }, 400);
  }
  const truthSpeed = resolveSpeed({ speed, mode, globalBatch: type.globalBatch }, measured);
  const workSec = Math.exp(rng.uniform(Math.log(REFERENCE_WORK_SEC.min), Math.log(REFERENCE_WORK_SEC.max)));
  const stepsPerEpoch = Math.max(1, Math.round((workSec * truthSpeed.speed(1, 1)) / epochs));
  return {
    id: `default/job-${String(spec.index).padStart(4, '0')}`,
    arrival: Math.round(spec.arrival * 1000) / 1000,
    type: type.name,
    mode,
    psDemand: { cpu: rng.int(3, 4), memory: Math.round(rng.uniform(9, 10) * GiB) },
    workerDemand: { cpu: 2, memory: Math.round(rng.uniform(8, 10) * GiB), 'nvidia.com/gpu': 1 },
    minPs: 1,
    maxPs: type.maxPs,
    minWorkers: 1,
    maxWorkers: type.maxWorkers,
    globalBatch: type.globalBatch,
    stepsPerEpoch,
    speed,
    work: { kind: 'loss-curve', curve, threshold, patience, noise: rng.uniform(0.01, 0.04) },
  };
}

/** Arrival times for `n` jobs of a workload, sorted. */
function arrivals(name: WorkloadName, n: number, rng: Rng, window: number): number[] {
  if (name === 'poisson') {
    let t = 0;
    return Array.from({ length: n }, () => (t += rng.exponential(window / n)));
  }
  if (name === 'bursty') {
    // Production traces arrive in bursts: a few burst times, each spreading its jobs over ~2 minutes.
    const bursts = Array.from({ length: Math.max(2, Math.round(n / 10)) }, () => rng.uniform(0, window));
    return Array.from({ length: n }, () => rng.pick(bursts) + rng.exponential(60)).sort((a, b) => a - b);
  }
  return Array.from({ length: n }, () => rng.uniform(0, window)).sort((a, b) => a - b);
}

/**
 * The paper workload (the very same jobs and arrivals) on servers that run slow now and then —
 * about two slow periods per server over the run, 10–40 minutes each, stretching the step time of
 * every worker on them 1.5–4× — with ResNet-50's 157 parameter blocks on its jobs (the only model
 * whose blocks the project derives), so straggler replacement and PAA have something to act on.
 */
function stragglerWorkload(o: WorkloadOptions): Trace {
  const base = buildWorkload('paper', o);
  const rng = createRng(o.seed).fork('workload:stragglers');
  const horizon = 14_400;
  const slowdowns = base.cluster.servers.flatMap((s) =>
    Array.from({ length: rng.int(1, 3) }, () => {
      const from = Math.round(rng.uniform(0, horizon));
      return {
        server: s.name,
        from,
        to: from + Math.round(rng.uniform(600, 2400)),
        factor: rng.uniform(1.5, 4),
      };
    }),
  );
  const blocks = resnet50Blocks();
  return {
    ...base,
    name: 'stragglers',
    cluster: { ...base.cluster, slowdowns },
    jobs: base.jobs.map((j) => (j.type === 'resnet-50' ? { ...j, parameterBlocks: blocks } : j)),
  };
}

/** Builds a built-in workload as a trace (deterministic in the seed). */
export function buildWorkload(name: WorkloadName, o: WorkloadOptions): Trace {
  if (name === 'stragglers') return stragglerWorkload(o);
  const rng = createRng(o.seed).fork(`workload:${name}`);
  const large = name === 'large';
  const n = o.jobs ?? (large ? 2000 : 60);
  const scale = large ? 40 : 1;
  // Keep the paper's load (60 jobs per 12,000 s on 13 servers) whatever the size.
  const window = (12_000 * n) / (60 * scale);
  const types = measuredTypes(o.measured);
  const synthetic = large ? Array.from({ length: 4 }, (_, i) => syntheticType(rng, i + 1)) : [];
  const times = arrivals(name, n, rng, window);
  const jobs = times.map((arrival, i) => {
    const type = synthetic.length > 0 && rng.next() < 0.2 ? rng.pick(synthetic) : rng.pick(types);
    const mode: TrainingMode =
      name === 'all-sync' ? 'sync' : name === 'all-async' ? 'async' : rng.next() < 0.5 ? 'sync' : 'async';
    return makeJob({ index: i + 1, arrival, type, mode }, rng, o.measured);
  });
  return {
    format: 'optimus-trace',
    version: 1,
    name,
    seed: o.seed,
    cluster: { servers: paperServers(scale) },
    jobs,
  };
}
