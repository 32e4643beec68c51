/**
 * The simulator's executor: the only writer to the simulated cluster. It carries a plan out on the
 * in-memory cluster state, charging the checkpoint → restart pause to a job whose shape or placement
 * changes (and to a suspended job when it resumes), and refusing actions that do not fit.
 *
 * The runtime hands each job's actions over separately; the calls made in one instant are carried
 * out together (after the current microtask), frees first, so that a round feasible as a whole is
 * never refused because of the order in which its jobs were dispatched — as a cluster's scheduler
 * would start a pending pod once another job's resize freed its room.
 */
import type { Resources } from '../../../shared/src/units';
import type { ExecuteOptions, ExecutionResult, Executor, Plan, PlanAction } from '../planning/types';
import type { JobShape, TaskPlacement } from '../scheduling/types';

/** What the cluster knows of a job: its per-task demands. */
export interface SimJobSpec {
  readonly id: string;
  readonly psDemand: Resources;
  readonly workerDemand: Resources;
}

/** The live state of one job on the simulated cluster. */
export interface SimJobState {
  readonly spec: SimJobSpec;
  shape: JobShape | null;
  placement: TaskPlacement[];
  /** Set by a `finish` action: the job is recorded as over. */
  finished: { outcome: 'succeeded' | 'failed'; reason: string; message: string } | null;
  /** Checkpoint → restart cycles carried out (resizes, and resumes after a suspension). */
  restarts: number;
  /** The job makes no progress before this time (restart pause). */
  pausedUntil: number;
  /** True once it has run: a later start resumes from a checkpoint and pays the pause. */
  hasRun: boolean;
}

export interface SimServer {
  readonly name: string;
  readonly capacity: Resources;
}

/** The in-memory cluster plus its executor. `now` is set by the engine before each plan. */
export class SimCluster implements Executor {
  now = 0;
  readonly jobs = new Map<string, SimJobState>();
  private readonly used = new Map<string, Record<string, number>>();
  private queued: { plan: Plan; resolve: (r: ExecutionResult) => void }[] = [];
  /** Ids of the jobs that hold something now (kept with every change, for the driver's scans). */
  readonly running = new Set<string>();
  /** Ids of the jobs an action touched since the backend last looked (its observation cache). */
  readonly touched = new Set<string>();
  /** Actions refused so far (a policy that asked for what does not fit). */
  failedActions = 0;
  /** Called after a batch of actions changed what runs. */
  onApplied: () => void = () => {};

  constructor(
    readonly servers: readonly SimServer[],
    private readonly restartPauseSec: number,
  ) {
    for (const s of servers) this.used.set(s.name, {});
  }

  submit(spec: SimJobSpec): void {
    this.touched.add(spec.id);
    this.jobs.set(spec.id, {
      spec,
      shape: null,
      placement: [],
      finished: null,
      restarts: 0,
      pausedUntil: 0,
      hasRun: false,
    });
  }

  /** Removes a finished job and frees what it held. */
  finish(id: string): void {
    const job = this.jobs.get(id);
    if (job) this.release(job);
    this.jobs.delete(id);
    this.running.delete(id);
    this.touched.add(id);
  }

  /** Resources in use on a server (by our jobs). */
  usage(server: string): Readonly<Record<string, number>> {
    return this.used.get(server) ?? {};
  }

  /** Injected start faults per job (the runtime contract): its starts fail, or never answer. */
  readonly faults = new Map<string, 'fail' | 'hang'>();

  execute(plan: Plan, o?: ExecuteOptions): Promise<ExecutionResult> {
    if (plan.actions.some((a) => this.faults.get(a.jobId) === 'hang' && startsTasks(a)))
      return new Promise((resolve) => {
        const fail = (): void =>
          resolve({ applied: [], failed: plan.actions.map((action) => ({ action, error: 'aborted' })) });
        if (o?.signal?.aborted) fail();
        o?.signal?.addEventListener('abort', fail, { once: true });
      });
    return new Promise((resolve) => {
      if (this.queued.length === 0) queueMicrotask(() => this.flush());
      this.queued.push({ plan, resolve });
    });
  }

  /** Carries out every plan queued in this instant as one, then answers each with its own part. */
  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    const all = this.executeNow({ actions: batch.flatMap((b) => b.plan.actions) });
    const applied = new Set(all.applied);
    const failed = new Map(all.failed.map((f) => [f.action, f.error]));
    this.failedActions += all.failed.length;
    this.onApplied();
    for (const { plan, resolve } of batch)
      resolve({
        applied: plan.actions.filter((a) => applied.has(a)),
        failed: plan.actions.flatMap((a) => {
          const error = failed.get(a);
          return error === undefined ? [] : [{ action: a, error }];
        }),
      });
  }

  /** Carries out one plan at once (frees first, then takes in plan order). */
  executeNow(plan: Plan): ExecutionResult {
    const applied: PlanAction[] = [];
    const failed: { action: PlanAction; error: string }[] = [];
    // Phase 1 frees everything that moves (suspends and resizes), so that a plan feasible as a whole is
    // never refused because of the order of its actions. Phase 2 takes, in plan order.
    const frees = new Set<string>();
    for (const action of plan.actions) {
      const job = this.jobs.get(action.jobId);
      if (job && (action.kind === 'suspend' || action.kind === 'resize' || action.kind === 'finish')) {
        this.release(job);
        frees.add(action.jobId);
      }
    }
    for (const action of plan.actions) {
      const error = this.apply(action, frees.has(action.jobId));
      if (error === null) applied.push(action);
      else failed.push({ action, error });
      const job = this.jobs.get(action.jobId);
      if (job?.shape) this.running.add(action.jobId);
      else this.running.delete(action.jobId);
      this.touched.add(action.jobId);
    }
    return { applied, failed };
  }

  private apply(action: PlanAction, released: boolean): string | null {
    const job = this.jobs.get(action.jobId);
    if (!job) return `unknown job ${action.jobId}`;
    if (this.faults.get(action.jobId) === 'fail' && startsTasks(action)) {
      // Like a real failed start: what ran was stopped, and nothing new came up.
      if (!released) this.release(job);
      job.shape = null;
      job.placement = [];
      return `the tasks of ${action.jobId} did not start (injected fault)`;
    }
    if (job.finished && action.kind !== 'finish') return `job ${action.jobId} has finished`;
    switch (action.kind) {
      case 'suspend':
        job.shape = null;
        job.placement = [];
        return null;
      case 'finish':
        job.shape = null;
        job.placement = [];
        job.finished = { outcome: action.outcome, reason: action.reason, message: action.message };
        return null;
      case 'start':
      case 'resize':
        return this.run(job, action, released);
      case 'replace-worker':
        return this.replaceWorker(job, action.index, action.server);
    }
  }

  /**
   * Starts or restarts a job. When its new tasks do not fit, a job that had been released holds nothing
   * afterwards (it was checkpointed and stopped), an unreleased one keeps what it held.
   */
  private run(
    job: SimJobState,
    action: { shape: JobShape; placement: readonly TaskPlacement[] },
    released: boolean,
  ): string | null {
    const { shape, placement } = action;
    if (placement.length !== shape.ps + shape.workers) {
      return `placement has ${placement.length} tasks, shape needs ${shape.ps + shape.workers}`;
    }
    const wasRunning = job.shape !== null;
    if (!released) this.release(job);
    const err = this.take(job.spec, placement);
    if (err !== null) {
      if (released) {
        job.shape = null;
        job.placement = [];
      } else this.take(job.spec, job.placement);
      return err;
    }
    // A resize always restarts; a start restarts only when resuming a job that ran before.
    if (wasRunning || job.hasRun) {
      job.restarts += 1;
      job.pausedUntil = this.now + this.restartPauseSec;
    }
    job.shape = { ps: shape.ps, workers: shape.workers };
    job.placement = placement.map((t) => ({ ...t }));
    job.hasRun = true;
    return null;
  }

  private replaceWorker(job: SimJobState, index: number, server: string): string | null {
    const task = job.placement.find((t) => t.role === 'worker' && t.index === index);
    if (!task) return `job ${job.spec.id} has no worker ${index}`;
    const rest = job.placement.filter((t) => t !== task);
    const moved = { role: 'worker' as const, index, server };
    this.release(job);
    const err = this.take(job.spec, [...rest, moved]);
    if (err !== null) {
      this.take(job.spec, job.placement);
      return err;
    }
    job.placement = [...rest, moved];
    return null;
  }

  private demand(spec: SimJobSpec, t: TaskPlacement): Resources {
    return t.role === 'ps' ? spec.psDemand : spec.workerDemand;
  }

  /** Takes the tasks' resources, all or nothing; returns an error when a server lacks room. */
  private take(spec: SimJobSpec, placement: readonly TaskPlacement[]): string | null {
    const added = new Map<string, Record<string, number>>();
    for (const t of placement) {
      const server = this.servers.find((s) => s.name === t.server);
      if (!server) return `unknown server ${t.server}`;
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

  private release(job: SimJobState): void {
    for (const t of job.placement) {
      const used = this.used.get(t.server);
      if (!used) continue;
      for (const [r, v] of Object.entries(this.demand(job.spec, t)))
        used[r] = Math.max(0, (used[r] ?? 0) - v);
    }
  }
}

const startsTasks = (a: PlanAction): boolean =>
  a.kind === 'start' || a.kind === 'resize' || a.kind === 'replace-worker';
