/**
 * The local backend: emulated servers, and every task of every job as real child processes
 * (the emulated MXNet trainer, plus the real sidecar bundle beside each worker).
 */
import { rmSync } from 'node:fs';
import type { ExecuteOptions, ExecutionResult, Executor, Plan, PlanAction } from '../planning/types';
import type { TaskPlacement } from '../scheduling/types';
import type {
  Backend,
  BackendEvents,
  JobEnd,
  Observation,
  ObservedJob,
  ObservedTask,
} from '../runtime/backend';
import type { CurrentJob } from '../runtime/core';
import type { JobSpec } from '../runtime/job-spec';
import { JobFiles } from './job-files';
import type { PidRegistry } from './processes';
import { spawnNode, stopProcess, waitAllReady, type Spawned } from './processes';
import type { SidecarSettings } from './sidecar-process';
import { LocalSidecars } from './sidecars';
import { trainerConfig } from './task-config';
import type { TrainerConfig } from './trainer/config';

export interface LocalServer {
  readonly name: string;
  readonly capacity: Readonly<Record<string, number>>;
}

export interface LocalBackendOptions {
  readonly servers: readonly LocalServer[];
  /** Root of job directories (under `.optimus/`). */
  readonly root: string;
  readonly trainerScript: string;
  /** The sidecar bundle and the broker it publishes to; null runs no sidecars (executor tests). */
  readonly sidecar: SidecarSettings | null;
  readonly timeScale: number;
  readonly restartCostSec: number;
  readonly pids: PidRegistry;
  /** Marks our processes (environment) so orphans can be recognised after a crash. */
  readonly marker: string;
  /** Errors of the process bookkeeping that runs after a child exits (nobody awaits it). */
  readonly onError?: (err: unknown) => void;
  /** Wall ms a start waits for every task to run (default 30 s); then it fails. */
  readonly startTimeoutMs?: number;
  /** A start fault to emulate per job (the runtime contract's failure cases), or null. */
  readonly faultOf?: (jobId: string) => TrainerConfig['fault'];
}

interface TaskProcs {
  readonly placement: TaskPlacement;
  readonly trainer: Spawned;
  readonly sidecar: Spawned | null;
  /** Set while we stop the task on purpose. */
  stopping: boolean;
  /** Set until the task reported that it runs: an exit before that is a failed start, not the job's. */
  starting: boolean;
  /** The trainer's exit code once it exited on its own; null while it runs. */
  exit: number | null;
  /**
   * An exit while `starting` after the task said it runs (a worker resumed at its last step prints
   * its start line and ends at once): handled once the start is confirmed, not dropped.
   */
  exitWhileStarting: number | null;
}

interface LocalJob {
  readonly spec: JobSpec;
  readonly files: JobFiles;
  tasks: TaskProcs[];
  current: CurrentJob | null;
  restarts: number;
  /** How the training program ended on its own (worker 0 exit 0, or a task failed), once it did. */
  exited: JobEnd | null;
  /** Recorded by a `finish` action. */
  finished: JobEnd | null;
}

export class LocalBackend implements Backend {
  readonly executor: Executor = { execute: (plan, o) => this.execute(plan, o) };
  private readonly jobs = new Map<string, LocalJob>();
  /**
   * Each job's last execution: a job's next actions wait for it. A rollout the runtime gave up on
   * (timed out, aborted) may still be stopping what it started; a new plan for the job must not
   * interleave with that (it would lose track of the processes the first one started).
   */
  private readonly chains = new Map<string, Promise<void>>();
  private events: BackendEvents | null = null;
  private readonly sidecars: LocalSidecars | null;

  constructor(private readonly o: LocalBackendOptions) {
    this.sidecars = o.sidecar
      ? new LocalSidecars({
          settings: o.sidecar,
          root: o.root,
          pids: o.pids,
          marker: o.marker,
          onError: this.report,
        })
      : null;
  }

  attach(events: BackendEvents): void {
    this.events = events;
  }

  /** What the process table says: each task's process, how the program ended, what was finished. */
  async observe(): Promise<Observation> {
    const jobs = new Map<string, ObservedJob>();
    for (const [id, j] of this.jobs) {
      const tasks: ObservedTask[] = j.tasks.map((t) => ({ ...t.placement, state: taskState(t) }));
      jobs.set(id, { tasks, exited: j.exited, finished: j.finished });
    }
    const servers = this.o.servers.map((s) => ({ name: s.name, capacity: s.capacity, reserved: {} }));
    return { servers, jobs };
  }

  async admit(spec: JobSpec, o?: { readonly fresh: boolean }): Promise<void> {
    const id = `${spec.namespace}/${spec.name}`;
    if (this.jobs.has(id)) return;
    // A new job under an old name must not resume the old one's checkpoint, logs or sidecar state.
    // Cleared here rather than on removal, so a crash in between cannot leave them behind.
    if (o?.fresh === true) JobFiles.clear(this.o.root, id);
    this.jobs.set(id, {
      spec,
      files: new JobFiles(this.o.root, id),
      tasks: [],
      current: null,
      restarts: 0,
      exited: null,
      finished: null,
    });
  }

  /** Stops everything of the job through the executor (the one writer), then forgets it. */
  async remove(jobId: string): Promise<void> {
    if (!this.jobs.has(jobId)) return;
    const r = await this.execute({
      actions: [{ kind: 'suspend', jobId, reason: 'removed from the controller' }],
    });
    this.jobs.delete(jobId);
    this.chains.delete(jobId);
    if (r.failed[0]) throw new Error(r.failed[0].error);
  }

  restarts(jobId: string): number {
    return this.jobs.get(jobId)?.restarts ?? 0;
  }

  /** Records each task's sidecar sent, keyed `namespace/job/worker/index`. */
  sentCounts(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, j] of this.jobs)
      for (const [i, n] of j.files.sentCounts()) out.set(`${id}/worker/${i}`, n);
    return out;
  }

  /** See {@link LocalSidecars.drainLeftovers}; 0 without sidecars. */
  async drainLeftovers(): Promise<number> {
    return (await this.sidecars?.drainLeftovers()) ?? 0;
  }

  async close(): Promise<void> {
    await Promise.all([...this.jobs.values()].map((j) => this.stopAll(j)));
  }

  private async execute(plan: Plan, o?: ExecuteOptions): Promise<ExecutionResult> {
    const outcome = new Map<PlanAction, string | null>();
    const byJob = new Map<string, PlanAction[]>();
    for (const a of plan.actions) byJob.set(a.jobId, [...(byJob.get(a.jobId) ?? []), a]);
    // Jobs are independent: their actions run concurrently; one job's actions run in order.
    await Promise.all(
      [...byJob].map(([jobId, actions]) => {
        const run = (this.chains.get(jobId) ?? Promise.resolve()).then(async () => {
          for (const a of actions) {
            if (o?.signal?.aborted) {
              outcome.set(a, `aborted: ${String(o.signal.reason)}`);
              continue;
            }
            outcome.set(
              a,
              await this.apply(a, o?.signal).then(
                () => null,
                (e: unknown) => (e as Error).message,
              ),
            );
          }
        });
        this.chains.set(jobId, run);
        return run;
      }),
    );
    const applied = plan.actions.filter((a) => outcome.get(a) === null);
    const failed = plan.actions.flatMap((a) => {
      const error = outcome.get(a);
      return error ? [{ action: a, error }] : [];
    });
    return { applied, failed };
  }

  private async apply(a: PlanAction, signal?: AbortSignal): Promise<void> {
    const job = this.jobs.get(a.jobId);
    if (!job) throw new Error(`unknown job ${a.jobId}`);
    if (job.finished && a.kind !== 'finish') throw new Error(`job ${a.jobId} has finished`);
    switch (a.kind) {
      case 'finish':
        // Recorded first (a crash in between leaves a finished job, never one started again).
        job.finished = { outcome: a.outcome, reason: a.reason, message: a.message };
        await this.stopAll(job);
        return;
      case 'start':
        // Leftovers (a set half stopped, a task that outlived the others) go first: one set at a time.
        if (job.tasks.length > 0) await this.stopAll(job);
        return this.startAll(job, { shape: a.shape, placement: a.placement }, signal);
      case 'resize':
        await this.stopAll(job);
        job.restarts += 1;
        return this.startAll(job, { shape: a.shape, placement: a.placement }, signal);
      case 'suspend':
        await this.stopAll(job);
        return;
      case 'replace-worker':
        await this.replaceWorker(job, a.index, a.server, signal);
    }
  }

  /**
   * Starts every task and waits until each runs (like pods reaching Running): a task that exits
   * first, or a set that does not come up in time (or is aborted), is a failed start — what did
   * start is stopped again, and the job holds nothing.
   */
  private async startAll(job: LocalJob, current: CurrentJob, signal?: AbortSignal): Promise<void> {
    this.checkServers(current.placement);
    job.exited = null;
    job.current = { shape: { ...current.shape }, placement: current.placement.map((p) => ({ ...p })) };
    job.tasks = current.placement.map((p) => this.startTask(job, p));
    const failure = await this.waitRunning(job.tasks, signal);
    if (failure === null) {
      for (const t of job.tasks) this.started(job, t);
      return;
    }
    await this.stopAll(job);
    throw new Error(failure);
  }

  /** Null once every task runs; otherwise why not. */
  private waitRunning(tasks: readonly TaskProcs[], signal?: AbortSignal): Promise<string | null> {
    return waitAllReady(
      tasks.map((t) => ({ name: `${t.placement.role} ${t.placement.index}`, process: t.trainer })),
      this.o.startTimeoutMs ?? 30_000,
      signal,
    );
  }

  private startTask(job: LocalJob, p: TaskPlacement): TaskProcs {
    const { spec, files } = job;
    const shape = job.current!.shape;
    const cfg = trainerConfig({
      spec,
      files,
      placement: p,
      shape,
      restarts: job.restarts,
      timeScale: this.o.timeScale,
      restartCostSec: this.o.restartCostSec,
      withSidecar: this.o.sidecar !== null,
      fault: this.o.faultOf?.(`${spec.namespace}/${spec.name}`) ?? null,
    });
    const env = {
      ...process.env,
      OPTIMUS_TRAINER_CONFIG: JSON.stringify(cfg),
      OPTIMUS_LOCAL_MARKER: this.o.marker,
    };
    if (p.role === 'worker') rmSync(files.doneMarker(p.index), { force: true });
    const trainer = spawnNode({
      script: this.o.trainerScript,
      env,
      stderrFile: files.stderr(`${p.role}-${p.index}`),
      ready: true,
    });
    this.o.pids.add(trainer.child.pid, `${spec.name} ${p.role}-${p.index}`);
    const sidecar =
      p.role === 'worker' ? (this.sidecars?.start(spec, files, p.index, cfg.workers) ?? null) : null;
    const procs: TaskProcs = {
      placement: p,
      trainer,
      sidecar,
      stopping: false,
      starting: true,
      exit: null,
      exitWhileStarting: null,
    };
    void trainer.exited.then((code) => this.onTrainerExit(job, procs, code)).catch(this.report);
    return procs;
  }

  /**
   * A trainer that exits on its own is observed, not acted on: worker 0's exit 0 means the program
   * reached its end, any other unexpected exit is a failed task. The runtime decides what follows
   * (and stops the rest through the executor).
   */
  private onTrainerExit(job: LocalJob, procs: TaskProcs, code: number): void {
    try {
      this.o.pids.delete(procs.trainer.child.pid);
    } catch (err) {
      this.report(err); // bookkeeping only: the exit below still counts
    }
    if (procs.stopping || !job.tasks.includes(procs)) return;
    if (procs.starting) {
      procs.exitWhileStarting = code; // a failed start if it never ran (waitRunning says so)
      return;
    }
    this.noteExit(job, procs, code);
  }

  /** The start of a task is confirmed: an exit that came meanwhile now counts. */
  private started(job: LocalJob, procs: TaskProcs): void {
    procs.starting = false;
    if (procs.exitWhileStarting !== null) this.noteExit(job, procs, procs.exitWhileStarting);
  }

  private noteExit(job: LocalJob, procs: TaskProcs, code: number): void {
    procs.exit = code;
    const { role, index } = procs.placement;
    // 143: stopped by a signal from outside (it checkpointed), like a pod evicted: not the job's end.
    if (code === 143) job.tasks = job.tasks.filter((t) => t !== procs);
    else if (code === 0 && role === 'worker' && index === 0)
      job.exited ??= {
        outcome: 'succeeded',
        reason: 'WorkersSucceeded',
        message: 'worker 0 finished training',
      };
    else if (code !== 0)
      job.exited ??= {
        outcome: 'failed',
        reason: 'TaskFailed',
        message: `${role} ${index} exited with code ${code}`,
      };
    this.events?.changed();
  }

  private readonly report = (err: unknown): void => this.o.onError?.(err);

  /** Stops every task: trainers checkpoint on SIGTERM; sidecars drain their log and exit. */
  private async stopAll(job: LocalJob): Promise<void> {
    const tasks = job.tasks;
    for (const t of tasks) t.stopping = true;
    await Promise.all(tasks.map((t) => stopProcess(t.trainer)));
    await Promise.all(tasks.map((t) => this.stopSidecar(job, t)));
    job.tasks = [];
    job.current = null;
  }

  private async stopSidecar(job: LocalJob, t: TaskProcs): Promise<void> {
    if (t.sidecar) await this.sidecars?.stop(job.files, t.placement.index, t.sidecar);
  }

  private async replaceWorker(
    job: LocalJob,
    index: number,
    server: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const old = job.tasks.find((t) => t.placement.role === 'worker' && t.placement.index === index);
    if (!old || !job.current) throw new Error(`job has no running worker ${index}`);
    this.checkServers([{ role: 'worker', index, server }]);
    old.stopping = true;
    job.tasks = job.tasks.filter((t) => t !== old);
    await stopProcess(old.trainer);
    await this.stopSidecar(job, old);
    const placement: TaskPlacement = { role: 'worker', index, server };
    job.current = {
      ...job.current,
      placement: job.current.placement.map((p) => (p.role === 'worker' && p.index === index ? placement : p)),
    };
    const task = this.startTask(job, placement);
    job.tasks.push(task);
    const failure = await this.waitRunning([task], signal);
    if (failure !== null) {
      await this.stopAll(job);
      throw new Error(`replacement worker ${index}: ${failure}; the job was stopped`);
    }
    this.started(job, task);
  }

  private checkServers(placement: readonly TaskPlacement[]): void {
    const known = new Set(this.o.servers.map((s) => s.name));
    const bad = placement.find((p) => !known.has(p.server));
    if (bad) throw new Error(`unknown server ${bad.server}`);
  }
}

function taskState(t: TaskProcs): ObservedTask['state'] {
  if (t.exit !== null) return t.exit === 0 ? 'succeeded' : 'failed';
  if (t.stopping) return 'stopping';
  return t.starting ? 'pending' : 'running';
}
