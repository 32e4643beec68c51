/** Test doubles of the runtime's ports: an in-memory backend, store and publisher, and a small core. */
import { pino } from 'pino';
import { metricsTopic, type TaskId } from '../../../shared/src/topics';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { planChanges } from '../planning/plan';
import type { Decision, PolicyInput, ServerSnapshot, TaskPlacement } from '../scheduling/types';
import type {
  Backend,
  BackendEvents,
  Executor,
  JobEnd,
  Observation,
  ObservedJob,
  RuntimeDocument,
  StateStore,
  StepOutcome,
  StepRequest,
  StoredRecord,
} from './backend';
import type { JobTarget, TargetTask } from './rollout/target';
import { scaledClock } from './clock';
import { Controller, type ControllerOptions, type Publisher } from './controller';
import type { Core, CurrentJob } from './core';
import { jobSpecSchema, type JobSpec } from './job-spec';

export class MemoryStore implements StateStore {
  doc: RuntimeDocument | null = null;
  records: StoredRecord[] = [];
  async load() {
    return { doc: this.doc && structuredClone(this.doc), records: [...this.records] };
  }
  appendRecord(r: StoredRecord): void {
    this.records.push(structuredClone(r));
  }
  async saveDocument(doc: RuntimeDocument): Promise<void> {
    this.doc = structuredClone(doc);
  }
  async close(): Promise<void> {}
}

export class MemoryPublisher implements Publisher {
  readonly retained = new Map<string, string>();
  async publish(topic: string, payload: string, { retain }: { retain: boolean }): Promise<void> {
    if (retain) this.retained.set(topic, payload);
  }
}

/**
 * Carries out every step at once, except every step of jobs listed in `failFor`, the starts of
 * those in `failStarts` (they fail) and of those in `hang` (they never answer until released);
 * observes exactly what it runs.
 */
export class FakeBackend implements Backend {
  /** Every step the executor was asked to take, in order. */
  readonly steps: StepRequest[] = [];
  readonly running = new Map<string, CurrentJob>();
  /** The generation each running task was started for, per job and `role/index` (absent: unknown). */
  private readonly generations = new Map<string, Map<string, number>>();
  readonly failFor = new Set<string>();
  readonly failStarts = new Set<string>();
  /** Jobs whose starts never return (until `release()`), like a step stuck on an API call. */
  readonly hang = new Set<string>();
  /** How a job's program ended on its own (observed as `exited`). */
  readonly exits = new Map<string, JobEnd>();
  /** Jobs recorded as finished (observed as `finished`). */
  readonly finished = new Map<string, JobEnd>();
  private readonly hung: (() => void)[] = [];
  events: BackendEvents | null = null;
  /** Every admit, in order: the job id and whether it was a fresh submission. */
  readonly admits: { id: string; fresh: boolean }[] = [];
  readonly executor: Executor = { step: (r) => this.step(r) };
  servers: ServerSnapshot[] = [{ name: 'node-a', capacity: { cpu: 16 }, reserved: {} }];
  /** Jobs the backend knows (admitted, not removed). */
  readonly known = new Set<string>();

  /** The targets the runtime stepped `jobId` toward, one per generation, in order. */
  targets(jobId: string): JobTarget[] {
    const out = new Map<number, JobTarget>();
    for (const r of this.steps) if (r.jobId === jobId) out.set(r.target.generation, r.target);
    return [...out.values()];
  }

  /** The kinds of the steps taken for `jobId`, in order (`start`, `stop`, `record-end`). */
  stepKinds(jobId: string): string[] {
    return this.steps.filter((r) => r.jobId === jobId).map((r) => r.step.kind);
  }

  private async step(r: StepRequest): Promise<StepOutcome> {
    this.steps.push(r);
    const { step } = r;
    if (this.failFor.has(r.jobId)) return { kind: 'failed', error: 'nope' };
    switch (step.kind) {
      case 'record-end':
        this.finished.set(r.jobId, step.end);
        return { kind: 'done' };
      case 'stop':
        this.stopTasks(r.jobId, step.tasks);
        return { kind: 'done' };
      case 'start':
        if (this.hang.has(r.jobId)) {
          await new Promise<void>((resolve) => this.hung.push(resolve));
          return { kind: 'failed', error: 'hung' };
        }
        if (this.failStarts.has(r.jobId)) return { kind: 'failed', error: 'nope' };
        this.startTasks(r.jobId, step.tasks);
        return { kind: 'done' };
    }
  }

  private stopTasks(id: string, tasks: readonly TaskPlacement[]): void {
    const cur = this.running.get(id);
    if (!cur) return;
    const gone = (p: TaskPlacement) => tasks.some((t) => t.role === p.role && t.index === p.index);
    this.set(
      id,
      cur.placement.filter((p) => !gone(p)),
    );
    for (const t of tasks) this.generations.get(id)?.delete(`${t.role}/${t.index}`);
  }

  private startTasks(id: string, tasks: readonly TargetTask[]): void {
    const before = (this.running.get(id)?.placement ?? []).filter(
      (p) => !tasks.some((t) => t.role === p.role && t.index === p.index),
    );
    this.set(id, [...before, ...tasks.map(({ role, index, server }) => ({ role, index, server }))]);
    const g = this.generations.get(id) ?? new Map<string, number>();
    for (const t of tasks) g.set(`${t.role}/${t.index}`, t.generation);
    this.generations.set(id, g);
  }

  private set(id: string, placement: TaskPlacement[]): void {
    if (placement.length === 0) {
      this.running.delete(id);
      return;
    }
    const shape = {
      ps: placement.filter((p) => p.role === 'ps').length,
      workers: placement.filter((p) => p.role === 'worker').length,
    };
    this.running.set(id, { shape, placement });
  }

  async observe(): Promise<Observation> {
    const jobs = new Map<string, ObservedJob>();
    for (const id of this.known) {
      const cur = this.running.get(id);
      const g = this.generations.get(id);
      jobs.set(id, {
        tasks: (cur?.placement ?? []).map((p) => {
          const generation = g?.get(`${p.role}/${p.index}`);
          return { ...p, state: 'running' as const, ...(generation !== undefined ? { generation } : {}) };
        }),
        exited: this.exits.get(id) ?? null,
        finished: this.finished.get(id) ?? null,
      });
    }
    return { servers: this.servers, jobs };
  }
  /** Lets every hung step return (as failed). */
  release(): void {
    for (const r of this.hung.splice(0)) r();
  }
  async admit(spec: JobSpec, o?: { readonly fresh: boolean }): Promise<void> {
    this.admits.push({ id: `${spec.namespace}/${spec.name}`, fresh: o?.fresh ?? false });
    this.known.add(`${spec.namespace}/${spec.name}`);
  }
  async remove(id: string): Promise<void> {
    this.running.delete(id);
    this.generations.delete(id);
    this.known.delete(id);
  }
  attach(events: BackendEvents): void {
    this.events = events;
  }
  async close(): Promise<void> {}
}

/** A core whose policy runs every job at 2 ps × 2 workers on node-a; fits succeed once data exists. */
export function fakeCore(): Core & { inputs: PolicyInput[] } {
  const inputs: PolicyInput[] = [];
  return {
    inputs,
    policy: {
      name: 'fixed',
      description: 'test policy',
      decide(input: PolicyInput): Decision {
        inputs.push(input);
        return {
          jobs: input.jobs.map((j) => ({
            jobId: j.id,
            action: 'run' as const,
            shape: { ps: 2, workers: 2 },
            placement: [0, 1].flatMap((index) => [
              { role: 'ps' as const, index, server: 'node-a' },
              { role: 'worker' as const, index, server: 'node-a' },
            ]),
            replaceWorkers: [],
          })),
        };
      },
    },
    // 900 steps to go from the last point, whatever it is.
    estimateConvergence: (points) => {
      if (points.length < 3) return { status: 'insufficient-data', reason: 'few points' };
      const last = points.at(-1)?.step ?? 0;
      return {
        status: 'ok',
        predictedTotalSteps: last + 900,
        lower: last + 700,
        upper: last + 1100,
        remainingSteps: 900,
        beta: [1, 1, 0],
        converged: false,
      };
    },
    fitSpeed: (samples) => {
      const mean = samples.reduce((a, s) => a + s.stepsPerSec, 0) / samples.length;
      return {
        predict: (_ps, w) => ({ stepsPerSec: mean * w, lower: mean * w * 0.9, upper: mean * w * 1.1 }),
      };
    },
    sampleShapes: () => [
      { ps: 1, workers: 1 },
      { ps: 1, workers: 2 },
      { ps: 2, workers: 1 },
    ],
    plan: (current, decision) => planChanges(current, decision),
  };
}

export function buildController(
  o: {
    store?: MemoryStore;
    backend?: FakeBackend;
    core?: Core;
    now?: () => number;
    options?: Partial<ControllerOptions>;
  } = {},
) {
  const store = o.store ?? new MemoryStore();
  const backend = o.backend ?? new FakeBackend();
  const publisher = new MemoryPublisher();
  const core = o.core ?? fakeCore();
  const controller = new Controller({
    core,
    backend,
    store,
    publisher,
    clock: (origin) => scaledClock({ scale: 10, originMs: origin ?? 0, ...(o.now && { source: o.now }) }),
    log: pino({ level: 'silent' }),
    id: 'test',
    schedulingIntervalSec: 3600,
    restartCostSec: 10,
    rolloutPollMs: 0,
    preRun: { budget: 4, maxPs: 2, maxWorkers: 3, recordsPerWorker: 2 },
    ...o.options,
  });
  return { controller, store, backend, publisher, core };
}

let seq = 0;
/** A Speedometer-like record from `worker` of job `default/<job>` at wall time `ts`. */
export function speedRecord(
  job: string,
  index: number,
  ts: number,
  step: number,
): { topic: string; payload: Buffer; record: MetricsRecord; task: TaskId } {
  const task: TaskId = { namespace: 'default', job, role: 'worker', index };
  const record: MetricsRecord = {
    v: 1,
    seq: seq++,
    ts,
    framework: 'mxnet',
    kind: 'batch',
    epoch: Math.floor(step / 100),
    batch: step % 100,
    samplesPerSec: 64,
    stepTime: null,
    loss: 1 / (1 + step / 100),
    lossName: 'cross-entropy',
    metrics: {},
  };
  return { topic: metricsTopic(task), payload: Buffer.from(JSON.stringify(record)), record, task };
}

/** A small valid job spec (1 CPU per task) named `name`, for runtime tests. */
export const testJobSpec = (name: string): JobSpec =>
  jobSpecSchema.parse({
    name,
    batchSize: 64,
    stepsPerEpoch: 100,
    psDemand: { cpu: 1 },
    workerDemand: { cpu: 1 },
  });
