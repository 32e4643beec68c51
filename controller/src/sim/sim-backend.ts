/**
 * The simulator as a backend of the shipped runtime: a simulated cluster (whose executor is the only
 * writer to it), the emulated training program of every admitted job, and observation of both. The
 * runtime drives it exactly as it drives the local processes or a Kubernetes cluster; the simulator's
 * driver (`engine.ts`) only moves virtual time and hands the programs' log records to the ingest.
 */
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import type { Backend, BackendEvents, Observation, ObservedJob } from '../runtime/backend';
import type { ServerSnapshot } from '../scheduling/types';
import type { JobSpec } from '../runtime/job-spec';
import { jobIdOf } from '../runtime/job-spec';
import type { MeasuredModel } from './measured-table';
import { SimCluster, type SimJobState } from './sim-executor';
import { SimTrainer } from './sim-trainer';
import type { Trace, TraceJob } from './trace';

export interface SimBackendOptions {
  readonly trace: Trace;
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  readonly seed: number;
  readonly restartPauseSec: number;
  /** Virtual time: job seconds and wall ms. */
  readonly now: () => number;
  readonly wallMs: () => number;
  /** Where the programs' log records go (the runtime's ingest). */
  readonly sink: (task: TaskId, record: MetricsRecord) => void;
  /** How the policy's jobs assign parameter blocks to PS (`Policy.parameterAssignment`). */
  readonly assignment?: 'paa' | 'mxnet-default';
  /** Relative noise of one logged speed (the trainers' default when absent). */
  readonly speedNoise?: number;
}

/** Splits a trace id `namespace/name` (or a bare name, in `default`). */
export function traceJobName(id: string): { namespace: string; name: string } {
  const i = id.indexOf('/');
  return i < 0 ? { namespace: 'default', name: id } : { namespace: id.slice(0, i), name: id.slice(i + 1) };
}

export class SimBackend implements Backend {
  readonly cluster: SimCluster;
  readonly executor: SimCluster;
  readonly trainers = new Map<string, SimTrainer>();
  private readonly byId: ReadonlyMap<string, TraceJob>;
  private events: BackendEvents | null = null;
  private readonly observedJobs = new Map<string, ObservedJob>();
  private readonly servers: readonly ServerSnapshot[];

  constructor(private readonly o: SimBackendOptions) {
    this.cluster = new SimCluster(o.trace.cluster.servers, o.restartPauseSec);
    this.executor = this.cluster;
    this.byId = new Map(o.trace.jobs.map((j) => [jobIdOf(traceJobName(j.id)), j]));
    this.servers = this.cluster.servers.map((s) => ({ name: s.name, capacity: s.capacity, reserved: {} }));
  }

  attach(events: BackendEvents): void {
    this.events = events;
  }

  /**
   * The cluster as it is. Kept between rounds and redone only for the jobs an action or an exit
   * touched (a long run has thousands of jobs and a round every few simulated seconds); an
   * unchanged job keeps its very object, which the runtime may compare by identity.
   */
  async observe(): Promise<Observation> {
    for (const id of this.cluster.touched) {
      const state = this.cluster.jobs.get(id);
      // A job recorded as finished that holds nothing needs no word: the runtime has wound it up.
      if (!state || (state.finished && state.placement.length === 0)) this.observedJobs.delete(id);
      else this.observedJobs.set(id, this.observed(id, state));
    }
    this.cluster.touched.clear();
    return { servers: this.servers, jobs: this.observedJobs };
  }

  async admit(spec: JobSpec): Promise<void> {
    const id = jobIdOf(spec);
    const job = this.byId.get(id);
    if (!job) throw new Error(`job ${id} is not in the trace`);
    if (this.trainers.has(id)) return;
    this.trainers.set(
      id,
      new SimTrainer({
        job,
        measured: this.o.measured,
        seed: this.o.seed,
        namespace: spec.namespace,
        name: spec.name,
        slowdowns: this.o.trace.cluster.slowdowns ?? [],
        ...(this.o.assignment ? { assignment: this.o.assignment } : {}),
        ...(this.o.speedNoise === undefined ? {} : { speedNoise: this.o.speedNoise }),
      }),
    );
    this.cluster.submit({ id, psDemand: job.psDemand, workerDemand: job.workerDemand });
  }

  async remove(jobId: string): Promise<void> {
    this.cluster.finish(jobId);
    this.trainers.delete(jobId);
  }

  /** Job seconds of the next thing any program does, or Infinity. */
  nextEventAt(now: number): number {
    let t = Infinity;
    for (const id of this.cluster.running) {
      const state = this.cluster.jobs.get(id);
      const trainer = this.trainers.get(id);
      if (state && trainer) t = Math.min(t, trainer.nextEventAt(state, now));
    }
    return t;
  }

  /** Moves every program from `from` to `to`, then lets each do what is due at `to`. */
  advance(from: number, to: number): void {
    let changed = false;
    for (const id of this.cluster.running) {
      const state = this.cluster.jobs.get(id);
      const trainer = this.trainers.get(id);
      if (!state?.shape || !trainer) continue;
      trainer.advance(state, from, to);
      const { records, exited } = trainer.step(state, to, this.o.wallMs());
      for (const [task, record] of records) this.o.sink(task, record);
      if (exited) {
        changed = true;
        this.cluster.touched.add(id);
      }
    }
    this.cluster.now = to;
    if (changed) this.events?.changed();
  }

  async close(): Promise<void> {}

  private observed(id: string, state: SimJobState): ObservedJob {
    const trainer = this.trainers.get(id);
    const running = trainer?.exitedAt === null;
    return {
      tasks: state.placement.map((p) => ({
        ...p,
        state: running ? ('running' as const) : ('succeeded' as const),
      })),
      exited:
        trainer && trainer.exitedAt !== null
          ? {
              outcome: 'succeeded',
              reason: 'WorkersSucceeded',
              message: 'the training program reached its end',
            }
          : null,
      finished: state.finished,
    };
  }
}
