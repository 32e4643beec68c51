/**
 * `optimus bench round`: the wall and CPU time of one whole runtime round — observe → reconcile →
 * refit → decide → plan → dispatch — through the shipped Controller, at scale. The backend is an
 * in-memory cluster that observes exactly what it was told to run; every job has logged loss and
 * speed records at three shapes, and before each timed round every job logs enough new records
 * that all of them are refitted (the worst case: a steady-state round refits fewer).
 */
import { pino } from 'pino';
import { GiB } from '../../../shared/src/units';
import { metricsTopic } from '../../../shared/src/topics';
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { Backend, Executor, Observation, ObservedJob, StepRequest } from '../runtime/backend';
import { scaledClock } from '../runtime/clock';
import { Controller } from '../runtime/controller';
import type { CurrentJob } from '../runtime/core';
import { defaultCore } from '../runtime/default-core';
import { jobSpecSchema, type JobSpec } from '../runtime/job-spec';
import { MemoryPublisher, MemoryStore } from '../runtime/testing';
import type { ServerSnapshot } from '../scheduling/types';

export interface RoundBenchOptions {
  readonly jobs: number;
  readonly nodes: number;
  readonly rounds: number;
  readonly policy: string;
}

export interface RoundBenchResult {
  readonly jobs: number;
  readonly nodes: number;
  /** Median wall seconds of one round. */
  readonly seconds: number;
  /** Median CPU seconds of one round (this process, user + system). */
  readonly cpuSeconds: number;
  /** Refits per timed round (every active job, by construction). */
  readonly refitsPerRound: number;
  readonly rounds: number;
}

/** An in-memory cluster: what the executor's steps do is what the next observation shows. */
class BenchBackend implements Backend {
  readonly running = new Map<string, CurrentJob>();
  private readonly known = new Set<string>();
  readonly executor: Executor = {
    step: async (r: StepRequest) => {
      const placement = this.running.get(r.jobId)?.placement ?? [];
      const { step } = r;
      const same = (a: { role: string; index: number }, b: { role: string; index: number }): boolean =>
        a.role === b.role && a.index === b.index;
      const next =
        step.kind === 'record-end'
          ? []
          : step.kind === 'stop'
            ? placement.filter((p) => !step.tasks.some((t) => same(p, t)))
            : [
                ...placement.filter((p) => !step.tasks.some((t) => same(p, t))),
                ...step.tasks.map(({ role, index, server }) => ({ role, index, server })),
              ];
      const ps = next.filter((p) => p.role === 'ps').length;
      if (next.length === 0) this.running.delete(r.jobId);
      else this.running.set(r.jobId, { shape: { ps, workers: next.length - ps }, placement: next });
      return { kind: 'done' };
    },
  };

  constructor(private readonly servers: readonly ServerSnapshot[]) {}

  async observe(): Promise<Observation> {
    const jobs = new Map<string, ObservedJob>();
    for (const id of this.known) {
      const cur = this.running.get(id);
      const tasks = (cur?.placement ?? []).map((p) => ({ ...p, state: 'running' as const }));
      jobs.set(id, { tasks, exited: null, finished: null });
    }
    return { servers: this.servers, jobs };
  }
  async admit(spec: JobSpec): Promise<void> {
    this.known.add(`${spec.namespace}/${spec.name}`);
  }
  async remove(id: string): Promise<void> {
    this.known.delete(id);
  }
  attach(): void {}
  async close(): Promise<void> {}
}

const servers = (n: number): ServerSnapshot[] =>
  Array.from({ length: n }, (_, i) =>
    i % 3 === 0
      ? { name: `gpu-${i}`, capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 4 }, reserved: {} }
      : { name: `cpu-${i}`, capacity: { cpu: 32, memory: 128 * GiB }, reserved: {} },
  );

const specOf = (i: number): JobSpec =>
  jobSpecSchema.parse({
    name: `job-${i}`,
    mode: i % 2 === 0 ? 'sync' : 'async',
    batchSize: 64,
    stepsPerEpoch: 100,
    convergence: { threshold: 0.001, patience: 5 },
    psDemand: { cpu: 2, memory: 4 * GiB },
    workerDemand:
      i % 3 === 0 ? { cpu: 2, memory: 8 * GiB, 'nvidia.com/gpu': 1 } : { cpu: 4, memory: 8 * GiB },
    maxPs: 8,
    maxWorkers: 12,
  });

/** Shapes each job is observed at before the timed rounds (three: the speed model is fitted). */
const WARM_SHAPES = [
  { ps: 1, workers: 1 },
  { ps: 1, workers: 2 },
  { ps: 2, workers: 2 },
] as const;

export async function timeRuntimeRound(
  o: RoundBenchOptions,
  clocks: { readonly now: () => number; readonly cpu: () => number },
): Promise<RoundBenchResult> {
  const backend = new BenchBackend(servers(o.nodes));
  let wall = Date.UTC(2026, 0, 1);
  const ctl = new Controller({
    core: defaultCore(o.policy),
    backend,
    store: new MemoryStore(),
    publisher: new MemoryPublisher(),
    clock: (origin) => scaledClock({ scale: 1, originMs: origin ?? wall, source: () => wall }),
    log: pino({ level: 'silent' }),
    id: 'bench',
    schedulingIntervalSec: 1e9,
    restartCostSec: 30,
    preRun: { budget: 0 },
  });
  await ctl.start();
  const specs = Array.from({ length: o.jobs }, (_, i) => specOf(i));
  for (const s of specs) await ctl.submit(s);
  let seq = 0;
  let step = 0;
  const feed = (points: number): void => {
    for (const s of specs) {
      const cur = backend.running.get(`${s.namespace}/${s.name}`);
      for (let k = 0; k < points; k += 1) {
        const g = step + k * 25;
        for (let w = 0; w < (cur?.shape.workers ?? 1); w += 1) {
          const record: MetricsRecord = {
            v: 1,
            seq: seq++,
            ts: wall,
            framework: 'mxnet',
            kind: 'batch',
            epoch: Math.floor(g / 100),
            batch: (g % 100) + 24,
            samplesPerSec: 64 * (1 + 0.05 * Math.sin(seq)),
            stepTime: null,
            loss: 2 / (1 + g / 400) + 0.1,
            lossName: 'cross-entropy',
            metrics: {},
          };
          ctl.handleMessage(
            metricsTopic({ namespace: s.namespace, job: s.name, role: 'worker', index: w }),
            Buffer.from(JSON.stringify(record)),
          );
        }
        wall += 10;
      }
    }
    step += points * 25;
  };
  for (const shape of WARM_SHAPES) {
    for (const s of specs)
      backend.running.set(`${s.namespace}/${s.name}`, {
        shape,
        placement: [
          ...Array.from({ length: shape.ps }, (_, index) => ({
            role: 'ps' as const,
            index,
            server: 'cpu-1',
          })),
          ...Array.from({ length: shape.workers }, (_, index) => ({
            role: 'worker' as const,
            index,
            server: 'cpu-2',
          })),
        ],
      });
    await ctl.roundNow('pre-run'); // the observed shape opens a span
    feed(8);
  }
  const walls: number[] = [];
  const cpus: number[] = [];
  let refits = 0;
  for (let r = 0; r < o.rounds; r += 1) {
    feed(Math.max(8, Math.ceil(step / 250))); // enough new points that every job is refitted
    const fitsBefore = await fitCount(ctl);
    const [t0, c0] = [clocks.now(), clocks.cpu()];
    await ctl.roundNow('full');
    walls.push((clocks.now() - t0) / 1000);
    cpus.push((clocks.cpu() - c0) / 1000);
    refits = ((await fitCount(ctl)) - fitsBefore) / 2;
    await ctl.settled();
  }
  await ctl.stop();
  return {
    jobs: o.jobs,
    nodes: o.nodes,
    seconds: median(walls),
    cpuSeconds: median(cpus),
    refitsPerRound: refits,
    rounds: o.rounds,
  };
}

async function fitCount(ctl: Controller): Promise<number> {
  const m = await ctl.metrics.fits.get();
  return m.values.reduce((a, v) => a + v.value, 0);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}
