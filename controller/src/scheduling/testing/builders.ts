/**
 * Builders for scheduling tests (kube-scheduler's `st.MakePod()` style): small, readable defaults
 * and one method per field that matters. Reusable by the simulator's and the adapters' tests.
 *
 * @example
 *   const input = snapshot()
 *     .servers(server('s1').cpu(16).memoryGiB(64), server('g1').cpu(8).gpus(2))
 *     .jobs(job('a').sync().remaining(10_000).speed(eq4({ theta: [1, 2.78, 4.92, 0, 0.02], batch: 1 })))
 *     .build();
 */
import {
  GiB,
  RESOURCE_CPU,
  RESOURCE_GPU,
  RESOURCE_MEMORY,
  type Resources,
} from '../../../../shared/src/units';
import type { SpeedModel, SpeedPrediction, TrainingMode } from '../../models/speed/types';
import type {
  JobShape,
  JobSnapshot,
  PolicyInput,
  RoleConstraints,
  RunSpan,
  ServerSnapshot,
  Taint,
  TaskPlacement,
} from '../types';

/** Sync speed model of paper Eq. 4: f = 1 / (θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p). */
export function eq4(options: { theta: readonly number[]; batch: number }): SpeedModel {
  const [t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0] = options.theta;
  return exact((p, w) => 1 / ((t0 * options.batch) / w + t1 + (t2 * w) / p + t3 * w + t4 * p));
}

/** Async speed model of paper Eq. 3: f = w / (θ0 + θ1·w/p + θ2·w + θ3·p). */
export function eq3(theta: readonly number[]): SpeedModel {
  const [t0 = 0, t1 = 0, t2 = 0, t3 = 0] = theta;
  return exact((p, w) => w / (t0 + (t1 * w) / p + t2 * w + t3 * p));
}

/** A model from any function, with a zero-width interval. */
export function exact(f: (ps: number, workers: number) => number): SpeedModel {
  return {
    predict(ps: number, workers: number): SpeedPrediction {
      const v = f(ps, workers);
      return { stepsPerSec: v, lower: v, upper: v };
    },
  };
}

export class ServerBuilder {
  private readonly cap: Record<string, number> = {};
  private readonly res: Record<string, number> = {};
  private readonly labelSet: Record<string, string> = {};
  private readonly taintList: Taint[] = [];
  constructor(private readonly name: string) {}
  labels(l: Record<string, string>): this {
    Object.assign(this.labelSet, l);
    return this;
  }
  taint(t: Taint): this {
    this.taintList.push(t);
    return this;
  }
  cpu(cores: number): this {
    this.cap[RESOURCE_CPU] = cores;
    return this;
  }
  memoryGiB(gib: number): this {
    this.cap[RESOURCE_MEMORY] = gib * GiB;
    return this;
  }
  gpus(n: number): this {
    this.cap[RESOURCE_GPU] = n;
    return this;
  }
  resource(name: string, amount: number): this {
    this.cap[name] = amount;
    return this;
  }
  reserved(r: Resources): this {
    Object.assign(this.res, r);
    return this;
  }
  build(): ServerSnapshot {
    return {
      name: this.name,
      capacity: { ...this.cap },
      reserved: { ...this.res },
      ...(Object.keys(this.labelSet).length > 0 ? { labels: { ...this.labelSet } } : {}),
      ...(this.taintList.length > 0 ? { taints: [...this.taintList] } : {}),
    };
  }
}

export const server = (name: string) => new ServerBuilder(name);

interface JobFields {
  id: string;
  mode: TrainingMode;
  psDemand: Resources;
  workerDemand: Resources;
  minPs: number;
  maxPs: number;
  minWorkers: number;
  maxWorkers: number;
  arrivalTime: number;
  current: JobSnapshot['current'];
  steps: number;
  speed: SpeedModel;
  workerStepTimes?: Readonly<Record<number, number>>;
  priority?: number;
  constraints?: RoleConstraints;
  runs?: readonly RunSpan[];
}

export class JobBuilder {
  private readonly f: JobFields;
  constructor(id: string) {
    this.f = {
      id,
      mode: 'sync',
      psDemand: { [RESOURCE_CPU]: 1 },
      workerDemand: { [RESOURCE_CPU]: 1 },
      minPs: 1,
      maxPs: 64,
      minWorkers: 1,
      maxWorkers: 64,
      arrivalTime: 0,
      current: null,
      steps: 1000,
      speed: eq4({ theta: [1.02, 2.78, 4.92, 0, 0.02], batch: 16 }),
    };
  }
  mode(mode: TrainingMode): this {
    this.f.mode = mode;
    return this;
  }
  sync(): this {
    this.f.mode = 'sync';
    return this;
  }
  async(): this {
    this.f.mode = 'async';
    return this;
  }
  ps(demand: Resources): this {
    this.f.psDemand = demand;
    return this;
  }
  worker(demand: Resources): this {
    this.f.workerDemand = demand;
    return this;
  }
  bounds(b: { minPs?: number; maxPs?: number; minWorkers?: number; maxWorkers?: number }): this {
    Object.assign(this.f, b);
    return this;
  }
  /** Fixes the shape: min = max. */
  rigid(shape: JobShape): this {
    return this.bounds({
      minPs: shape.ps,
      maxPs: shape.ps,
      minWorkers: shape.workers,
      maxWorkers: shape.workers,
    });
  }
  arrival(t: number): this {
    this.f.arrivalTime = t;
    return this;
  }
  remaining(steps: number): this {
    this.f.steps = steps;
    return this;
  }
  speed(model: SpeedModel): this {
    this.f.speed = model;
    return this;
  }
  priority(p: number): this {
    this.f.priority = p;
    return this;
  }
  /** Node constraints per role (what the job's pod templates say). */
  constraints(c: RoleConstraints): this {
    this.f.constraints = c;
    return this;
  }
  /** The job's run history (what attained service is derived from). */
  runs(list: readonly RunSpan[]): this {
    this.f.runs = list;
    return this;
  }
  stepTimes(times: Readonly<Record<number, number>>): this {
    this.f.workerStepTimes = times;
    return this;
  }
  /** The job runs now at `shape`, tasks on the given servers (PS list, then worker list). */
  running(shape: JobShape, servers: { ps: readonly string[]; workers: readonly string[] }): this {
    const placement: TaskPlacement[] = [
      ...servers.ps.map((server, index) => ({ role: 'ps' as const, index, server })),
      ...servers.workers.map((server, index) => ({ role: 'worker' as const, index, server })),
    ];
    this.f.current = { shape, placement };
    return this;
  }
  build(): JobSnapshot {
    const { steps, ...rest } = this.f;
    return { ...rest, remaining: { steps, lower: steps, upper: steps } };
  }
}

export const job = (id: string) => new JobBuilder(id);

export class SnapshotBuilder {
  private s: ServerSnapshot[] = [];
  private j: JobSnapshot[] = [];
  private now = 0;
  private restart = 0;
  servers(...list: (ServerBuilder | ServerSnapshot)[]): this {
    this.s.push(...list.map((x) => (x instanceof ServerBuilder ? x.build() : x)));
    return this;
  }
  jobs(...list: (JobBuilder | JobSnapshot)[]): this {
    this.j.push(...list.map((x) => (x instanceof JobBuilder ? x.build() : x)));
    return this;
  }
  at(now: number): this {
    this.now = now;
    return this;
  }
  restartCost(sec: number): this {
    this.restart = sec;
    return this;
  }
  build(): PolicyInput {
    return { now: this.now, servers: [...this.s], jobs: [...this.j], restartCostSec: this.restart };
  }
}

export const snapshot = () => new SnapshotBuilder();

/** Servers used per role of one job's placement, e.g. { ps: {s1: 2}, worker: {s1: 2, s2: 2} }. */
export function tasksPerServer(placement: readonly TaskPlacement[]): {
  ps: Record<string, number>;
  worker: Record<string, number>;
} {
  const out = { ps: {} as Record<string, number>, worker: {} as Record<string, number> };
  for (const t of placement) out[t.role][t.server] = (out[t.role][t.server] ?? 0) + 1;
  return out;
}

/** Demand of a task that needs GPUs (a GPU worker), e.g. `gpuTask(2)` = 2 cores + 1 GPU. */
export function gpuTask(cpu: number, gpus = 1): Resources {
  return { [RESOURCE_CPU]: cpu, [RESOURCE_GPU]: gpus };
}
