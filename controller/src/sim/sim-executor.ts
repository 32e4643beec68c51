/**
 * The simulator's cluster and its executor, the only writer to it. Rollouts take time here as they
 * do in a cluster (ADR 0035): a stopped task checkpoints and exits, and holds its server until it
 * is gone; a started task holds its server at once and runs after the pod-start time; the job trains
 * only while every task of a whole set runs, and its first step after a (re)start comes after the
 * first-step time. The durations are the named assumptions of `restart-phases.ts`, on virtual time.
 * A step that does not fit is refused (the runtime only starts what fits; this is the cluster's own
 * check). Injected faults per job (the runtime contract): starts that fail, or never run.
 */
import type { Resources } from '../../../shared/src/units';
import type { ObservedTask } from '../runtime/observed';
import type { RolloutStep } from '../runtime/rollout/next-step';
import type { JobTarget, TargetTask } from '../runtime/rollout/target';
import type { JobShape, TaskPlacement } from '../scheduling/types';
import type { RestartPhases } from './restart-phases';

/** What the cluster knows of a job: its per-task demands and declared model. */
export interface SimJobSpec {
  readonly id: string;
  readonly psDemand: Resources;
  readonly workerDemand: Resources;
  /** The declared model: its restart phases (`restart-phases.ts`). */
  readonly model?: string;
}

/** One task on the simulated cluster, and when its state changes next (job seconds). */
export interface SimTask extends TaskPlacement {
  readonly generation: number;
  /** Succeeded: its program ended (it holds nothing, like a pod that completed). */
  state: 'pending' | 'running' | 'stopping' | 'succeeded' | 'failed';
  /** Pending: when it runs; stopping: when it is gone (Infinity: never, a hung start). */
  until: number;
  /** It has trained (its first step is behind it). */
  trained: boolean;
}

/** The live state of one job on the simulated cluster. */
export interface SimJobState {
  readonly spec: SimJobSpec;
  tasks: SimTask[];
  /** The set that trains (every task of a whole set running), or null: what the trainer reads. */
  shape: JobShape | null;
  placement: TaskPlacement[];
  /** Set by recording the job's end: it is over. */
  finished: { outcome: 'succeeded' | 'failed'; reason: string; message: string } | null;
  /** Checkpoint → restart cycles (sets started again after one ran). */
  restarts: number;
  /** The job makes no progress before this time (its first step after a start). */
  pausedUntil: number;
  /** True once a set of it ran: the next start resumes from a checkpoint. */
  hasRun: boolean;
  /** When the job's checkpoint is written (a stop with the checkpoint grace), until reported. */
  checkpointAt: number | null;
  /** Tasks in the set last started (its target's): only the whole set trains. */
  expected: number;
}

export interface SimServer {
  readonly name: string;
  readonly capacity: Resources;
}

/** The in-memory cluster plus its executor. `now` moves with the simulation (job seconds). */
export class SimCluster {
  now = 0;
  readonly jobs = new Map<string, SimJobState>();
  private readonly used = new Map<string, Record<string, number>>();
  /** Ids of the jobs that hold something now (kept with every change, for the driver's scans). */
  readonly running = new Set<string>();
  /** Ids of the jobs with a task whose state changes at a known time. */
  private readonly moving = new Set<string>();
  /** Ids of the jobs a step or a transition touched since the backend last looked. */
  readonly touched = new Set<string>();
  /** Steps refused so far (a start that does not fit, on a finished job...). */
  failedSteps = 0;
  /** Called after something changed what runs (a step, a task gone, a task running). */
  onApplied: () => void = () => {};
  /** Injected start faults per job (the runtime contract): its starts fail, or never run. */
  readonly faults = new Map<string, 'fail' | 'hang'>();

  constructor(
    readonly servers: readonly SimServer[],
    private readonly phasesOf: (job: SimJobSpec) => RestartPhases,
  ) {
    for (const s of servers) this.used.set(s.name, {});
  }

  submit(spec: SimJobSpec): void {
    this.touched.add(spec.id);
    this.jobs.set(spec.id, {
      spec,
      tasks: [],
      shape: null,
      placement: [],
      finished: null,
      restarts: 0,
      pausedUntil: 0,
      hasRun: false,
      checkpointAt: null,
      expected: 0,
    });
  }

  /** Removes a job and frees what it held (at once: the job is gone from the runtime too). */
  finish(id: string): void {
    const job = this.jobs.get(id);
    if (job) for (const t of job.tasks) this.release(job.spec, t);
    this.jobs.delete(id);
    this.running.delete(id);
    this.moving.delete(id);
    this.touched.add(id);
  }

  /** Resources in use on a server (by our jobs). */
  usage(server: string): Readonly<Record<string, number>> {
    return this.used.get(server) ?? {};
  }

  /** Carries out one step toward `target` at `now`; an error when the cluster refuses it. */
  apply(jobId: string, target: JobTarget, step: RolloutStep): string | null {
    const job = this.jobs.get(jobId);
    const error = job ? this.applyTo(job, target, step) : `unknown job ${jobId}`;
    if (error !== null) this.failedSteps += 1;
    this.changed(jobId);
    return error;
  }

  private applyTo(job: SimJobState, target: JobTarget, step: RolloutStep): string | null {
    switch (step.kind) {
      case 'record-end':
        job.finished = step.end;
        return null;
      case 'stop':
        job.expected = target.tasks.length;
        this.stop(job, step.tasks, step.checkpoint);
        return null;
      case 'start':
        if (job.finished) return `job ${job.spec.id} has finished`;
        job.expected = target.tasks.length;
        return this.start(job, step.tasks);
    }
  }

  private stop(job: SimJobState, tasks: readonly ObservedTask[], checkpoint: boolean): void {
    const phases = this.phasesOf(job.spec);
    const wasTraining = job.shape !== null;
    for (const o of tasks) {
      const t = job.tasks.find(
        (x) =>
          x.role === o.role &&
          x.index === o.index &&
          x.state !== 'stopping' &&
          (o.generation === undefined || x.generation === o.generation),
      );
      if (!t) continue;
      if (t.state === 'failed' || t.state === 'succeeded') {
        job.tasks = job.tasks.filter((x) => x !== t); // it held nothing any more
        continue;
      }
      // A task that ran saves its checkpoint first; one that never ran only exits.
      const save = checkpoint && t.state === 'running' ? phases.checkpointSec : 0;
      [t.state, t.until] = ['stopping', this.now + save + phases.terminationSec];
    }
    // SIGTERM: training stops; worker 0 writes the checkpoint after the checkpoint time.
    if (wasTraining && checkpoint && tasks.some((o) => o.role === 'worker' && o.index === 0))
      job.checkpointAt = this.now + phases.checkpointSec;
    this.retrain(job);
  }

  private start(job: SimJobState, wanted: readonly TargetTask[]): string | null {
    // Idempotent: a task already started for this generation is not started twice.
    const tasks = wanted.filter(
      (t) =>
        !job.tasks.some(
          (x) =>
            x.role === t.role &&
            x.index === t.index &&
            x.generation === t.generation &&
            x.state !== 'stopping',
        ),
    );
    const fresh: SimTask[] = tasks.map((t) => ({
      role: t.role,
      index: t.index,
      server: t.server,
      generation: t.generation,
      state: 'pending',
      until: Infinity,
      trained: false,
    }));
    const err = this.take(job.spec, fresh);
    if (err !== null) return err;
    const fault = this.faults.get(job.spec.id);
    if (fault === 'fail') {
      // Like a pod whose image cannot be pulled: it failed, and holds nothing.
      for (const t of fresh) {
        this.release(job.spec, t);
        t.state = 'failed';
      }
    } else {
      const runAt = fault === 'hang' ? Infinity : this.now + this.phasesOf(job.spec).podStartSec;
      for (const t of fresh) t.until = runAt;
    }
    job.tasks = [...job.tasks, ...fresh];
    this.retrain(job);
    return null;
  }

  /** The job's program ended: its tasks completed and hold nothing (the runtime removes them). */
  programExited(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    for (const t of job.tasks)
      if (t.state === 'running' || t.state === 'pending') {
        this.release(job.spec, t);
        [t.state, t.until] = ['succeeded', Infinity];
      }
    this.retrain(job);
    this.changed(id);
  }

  /** Job seconds of the next task transition (or checkpoint), or Infinity. */
  nextTransitionAt(): number {
    let t = Infinity;
    for (const id of this.moving) {
      const job = this.jobs.get(id);
      if (!job) continue;
      if (job.checkpointAt !== null) t = Math.min(t, job.checkpointAt);
      for (const x of job.tasks)
        if (x.state === 'pending' || x.state === 'stopping') t = Math.min(t, x.until);
    }
    return t;
  }

  /**
   * Carries out every transition due by `now`: stopped tasks go (their servers free), started ones
   * run. Returns the jobs whose checkpoint came due (the backend has their trainers report it) and
   * whether any task changed state.
   */
  settle(now: number): { checkpoints: string[]; moved: boolean } {
    this.now = Math.max(this.now, now);
    const checkpoints: string[] = [];
    let any = false;
    for (const id of [...this.moving]) {
      const job = this.jobs.get(id);
      if (!job) continue;
      let moved = false;
      let fired = false;
      if (job.checkpointAt !== null && job.checkpointAt <= this.now + 1e-9) {
        job.checkpointAt = null;
        checkpoints.push(id);
        fired = true;
      }
      let ranAt = -Infinity;
      for (const t of [...job.tasks]) {
        if (t.until > this.now + 1e-9) continue;
        if (t.state === 'stopping') {
          this.release(job.spec, t);
          job.tasks = job.tasks.filter((x) => x !== t);
          moved = true;
        } else if (t.state === 'pending') {
          ranAt = Math.max(ranAt, t.until);
          [t.state, t.until] = ['running', Infinity];
          moved = true;
        }
      }
      if (moved) {
        any = true;
        this.retrain(job, Number.isFinite(ranAt) ? ranAt : this.now);
        this.changed(id);
      } else if (fired) this.retrain(job);
    }
    return { checkpoints, moved: any };
  }

  /**
   * The set that trains follows the tasks: the whole set started last, every task running. A set
   * with a task that has not trained yet (a start, a restart, a replaced worker) first spends its
   * first-step time.
   */
  private retrain(job: SimJobState, at = this.now): void {
    const tasks = job.tasks;
    const whole =
      tasks.length > 0 && tasks.length === job.expected && tasks.every((t) => t.state === 'running')
        ? shapeOfTasks(tasks)
        : null;
    if (whole && tasks.some((t) => !t.trained)) {
      if (job.hasRun) job.restarts += 1;
      job.hasRun = true;
      job.pausedUntil = at + this.phasesOf(job.spec).firstStepSec;
      for (const t of tasks) t.trained = true;
    }
    job.shape = whole;
    // A new array only when the placement changed: the trainer caches its speed per placement.
    if (!whole) job.placement = [];
    else if (!samePlacement(job.placement, tasks))
      job.placement = tasks.map(({ role, index, server }) => ({ role, index, server }));
    const id = job.spec.id;
    if (tasks.length > 0) this.running.add(id);
    else this.running.delete(id);
    if (job.checkpointAt !== null || tasks.some((t) => t.state === 'pending' || t.state === 'stopping'))
      this.moving.add(id);
    else this.moving.delete(id);
  }

  private changed(id: string): void {
    this.touched.add(id);
    this.onApplied();
  }

  private demand(spec: SimJobSpec, t: TaskPlacement): Resources {
    return t.role === 'ps' ? spec.psDemand : spec.workerDemand;
  }

  /** Takes the tasks' resources, all or nothing; returns an error when a server lacks room. */
  private take(spec: SimJobSpec, tasks: readonly TaskPlacement[]): string | null {
    const added = new Map<string, Record<string, number>>();
    for (const t of tasks) {
      if (!this.servers.some((s) => s.name === t.server)) return `unknown server ${t.server}`;
      const sum = added.get(t.server) ?? {};
      for (const [r, v] of Object.entries(this.demand(spec, t))) sum[r] = (sum[r] ?? 0) + v;
      added.set(t.server, sum);
    }
    for (const [name, add] of added) {
      const cap = this.servers.find((s) => s.name === name)?.capacity ?? {};
      const used = this.used.get(name) ?? {};
      for (const [r, v] of Object.entries(add)) {
        if ((used[r] ?? 0) + v > (cap[r] ?? 0) + 1e-9) return `server ${name} lacks ${r} for job ${spec.id}`;
      }
    }
    for (const [name, add] of added) {
      const used = this.used.get(name) ?? {};
      for (const [r, v] of Object.entries(add)) used[r] = (used[r] ?? 0) + v;
      this.used.set(name, used);
    }
    return null;
  }

  private release(spec: SimJobSpec, t: TaskPlacement): void {
    const used = this.used.get(t.server);
    if (!used) return;
    for (const [r, v] of Object.entries(this.demand(spec, t))) used[r] = Math.max(0, (used[r] ?? 0) - v);
  }
}

function shapeOfTasks(tasks: readonly TaskPlacement[]): JobShape | null {
  let ps = 0;
  let workers = 0;
  for (const t of tasks)
    if (t.role === 'ps') ps += 1;
    else workers += 1;
  return ps > 0 && workers > 0 ? { ps, workers } : null;
}

function samePlacement(a: readonly TaskPlacement[], b: readonly TaskPlacement[]): boolean {
  return (
    a.length === b.length &&
    b.every((t) => a.some((p) => p.role === t.role && p.index === t.index && p.server === t.server))
  );
}
