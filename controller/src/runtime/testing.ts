/** Test doubles of the runtime's ports: an in-memory backend, store and publisher, and a small core. */
import { pino } from 'pino';
import { metricsTopic, type TaskId } from '../../../shared/src/topics';
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { ExecuteOptions, ExecutionResult, Plan, PlanAction } from '../planning/types';
import { planChanges } from '../planning/plan';
import type { Decision, PolicyInput, ServerSnapshot } from '../scheduling/types';
import type {
  Backend,
  BackendEvents,
  JobEnd,
  Observation,
  ObservedJob,
  RuntimeDocument,
  StateStore,
  StoredRecord,
} from './backend';
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
 * Applies every action at once, except those on jobs listed in `failFor` (or, for `hang`, never
 * answers until released); observes exactly what it runs.
 */
export class FakeBackend implements Backend {
  readonly plans: PlanAction[][] = [];
  readonly running = new Map<string, CurrentJob>();
  readonly failFor = new Set<string>();
  /** Jobs whose actions never return (until `release()`), like a rollout stuck on a pod. */
  readonly hang = new Set<string>();
  /** How a job's program ended on its own (observed as `exited`). */
  readonly exits = new Map<string, JobEnd>();
  /** Jobs recorded as finished (observed as `finished`). */
  readonly finished = new Map<string, JobEnd>();
  private readonly hung: (() => void)[] = [];
  events: BackendEvents | null = null;
  /** Every admit, in order: the job id and whether it was a fresh submission. */
  readonly admits: { id: string; fresh: boolean }[] = [];
  readonly executor = {
    execute: async (plan: Plan, o?: ExecuteOptions): Promise<ExecutionResult> => {
      // Only plans that do something: a timer-driven round with nothing to do must not shift `at(-1)`.
      if (plan.actions.length > 0) this.plans.push([...plan.actions]);
      if (plan.actions.some((a) => this.hang.has(a.jobId))) {
        await new Promise<void>((resolve) => {
          this.hung.push(resolve);
          o?.signal?.addEventListener('abort', () => resolve());
        });
        return { applied: [], failed: plan.actions.map((action) => ({ action, error: 'hung' })) };
      }
      const failed = plan.actions
        .filter((a) => this.failFor.has(a.jobId))
        .map((action) => ({ action, error: 'nope' }));
      const applied = plan.actions.filter((a) => !this.failFor.has(a.jobId));
      for (const a of applied) {
        if (a.kind === 'start' || a.kind === 'resize')
          this.running.set(a.jobId, { shape: a.shape, placement: a.placement });
        if (a.kind === 'suspend') this.running.delete(a.jobId);
        if (a.kind === 'finish') {
          this.running.delete(a.jobId);
          this.finished.set(a.jobId, { outcome: a.outcome, reason: a.reason, message: a.message });
        }
      }
      return { applied, failed };
    },
  };
  servers: ServerSnapshot[] = [{ name: 'node-a', capacity: { cpu: 16 }, reserved: {} }];
  /** Jobs the backend knows (admitted, not removed). */
  readonly known = new Set<string>();
  async observe(): Promise<Observation> {
    const jobs = new Map<string, ObservedJob>();
    for (const id of this.known) {
      const cur = this.running.get(id);
      jobs.set(id, {
        tasks: (cur?.placement ?? []).map((p) => ({ ...p, state: 'running' as const })),
        exited: this.exits.get(id) ?? null,
        finished: this.finished.get(id) ?? null,
      });
    }
    return { servers: this.servers, jobs };
  }
  /** Lets every hung action return (as failed). */
  release(): void {
    for (const r of this.hung.splice(0)) r();
  }
  async admit(spec: JobSpec, o?: { readonly fresh: boolean }): Promise<void> {
    this.admits.push({ id: `${spec.namespace}/${spec.name}`, fresh: o?.fresh ?? false });
    this.known.add(`${spec.namespace}/${spec.name}`);
  }
  async remove(id: string): Promise<void> {
    this.running.delete(id);
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
