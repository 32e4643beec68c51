/**
 * The default demo workload: five small MXNet-like jobs (sync and async) arriving over the
 * first minutes on three emulated servers: about 16 minutes of job time, so a few minutes of wall
 * time at the default time scale — long enough to watch the decisions happen.
 */
import { GiB } from '../../../shared/src/units';
import type { JobSpecInput } from '../runtime/job-spec';
import type { LocalServer } from './backend';

/**
 * Job seconds per wall second unless `--time-scale` says otherwise. At 20 the demo was over a
 * minute after it started, before anyone had opened the dashboard; at 5 it takes about four, a
 * scheduling round (120 job s) comes every 24 s and a restart (20 job s) takes 4 s.
 */
export const DEFAULT_TIME_SCALE = 5;

export interface WorkloadJob {
  /** Job seconds after the start of the run when the job is submitted. */
  readonly arrival: number;
  readonly spec: JobSpecInput;
}

export const DEMO_SERVERS: readonly LocalServer[] = [
  { name: 'server-1', capacity: { cpu: 8, memory: 32 * GiB } },
  { name: 'server-2', capacity: { cpu: 8, memory: 32 * GiB } },
  { name: 'server-3', capacity: { cpu: 8, memory: 32 * GiB } },
];

const ps = { cpu: 1, memory: 2 * GiB };
const worker = { cpu: 1, memory: 4 * GiB };
const syncTheta = [0.002, 0.05, 0.03, 0.005, 0.01];

const job = (name: string, arrival: number, over: Partial<JobSpecInput>): WorkloadJob => ({
  arrival,
  spec: {
    name,
    mode: 'sync',
    batchSize: 256,
    stepsPerEpoch: 100,
    convergence: { threshold: 0.02, patience: 2 },
    maxEpochs: 30,
    psDemand: ps,
    workerDemand: worker,
    maxPs: 4,
    maxWorkers: 8,
    emulation: { theta: syncTheta, beta: [0.002, 0.5, 0.1], lossNoise: 0.02, speedNoise: 0.03 },
    ...over,
  },
});

export const DEMO_WORKLOAD: readonly WorkloadJob[] = [
  job('resnet-50', 0, {}),
  job('inception-bn', 0, {
    stepsPerEpoch: 150,
    emulation: {
      theta: [0.003, 0.04, 0.04, 0.004, 0.02],
      beta: [0.004, 0.5, 0.1],
      lossNoise: 0.02,
      speedNoise: 0.03,
    },
  }),
  job('seq2seq', 60, {
    mode: 'async',
    batchSize: 32,
    emulation: {
      theta: [0.3, 0.08, 0.01, 0.02],
      beta: [0.003, 0.6, 0.05],
      lossNoise: 0.02,
      speedNoise: 0.03,
    },
  }),
  job('cnn-rand', 120, {
    stepsPerEpoch: 80,
    emulation: {
      theta: [0.001, 0.06, 0.02, 0.006, 0.01],
      beta: [0.004, 0.5, 0.1],
      lossNoise: 0.03,
      speedNoise: 0.03,
    },
  }),
  job('dssm', 180, {
    workerDemand: { cpu: 2, memory: 4 * GiB },
    emulation: { theta: syncTheta, beta: [0.003, 0.6, 0.05], lossNoise: 0.02, speedNoise: 0.03 },
  }),
];

/** A three-job smoke workload (two sync, one async) for tests and a quick look. */
export const SMALL_WORKLOAD: readonly WorkloadJob[] = [
  job('alpha', 0, { stepsPerEpoch: 60 }),
  job('beta', 0, {
    mode: 'async',
    batchSize: 32,
    stepsPerEpoch: 60,
    emulation: {
      theta: [0.3, 0.08, 0.01, 0.02],
      beta: [0.004, 0.6, 0.05],
      lossNoise: 0.02,
      speedNoise: 0.03,
    },
  }),
  job('gamma', 30, {
    stepsPerEpoch: 60,
    emulation: {
      theta: [0.001, 0.06, 0.02, 0.006, 0.01],
      beta: [0.005, 0.5, 0.1],
      lossNoise: 0.03,
      speedNoise: 0.03,
    },
  }),
];

/** Workloads by the name `--workload` takes. */
export const WORKLOADS: Readonly<Record<string, readonly WorkloadJob[]>> = {
  demo: DEMO_WORKLOAD,
  small: SMALL_WORKLOAD,
  /** Nothing is submitted: jobs come over the API (`POST /api/v1/jobs`). */
  none: [],
};
