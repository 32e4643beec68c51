/**
 * The local backend: emulated servers, and every task of every job as real child processes
 * (the emulated MXNet trainer, plus the real sidecar bundle beside each worker). Its executor
 * carries out one rollout step at a time (ADR 0035) and never waits for the processes: a stopped
 * task checkpoints on SIGTERM and is observed `stopping` until it and its sidecar are gone; a
 * started task is `pending` until it prints its ready line. Every process carries the target
 * generation it was started for (`OPTIMUS_GENERATION`).
 */
import { rmSync } from 'node:fs';
import type { TaskPlacement } from '../scheduling/types';
import type {
  Backend,
  BackendEvents,
  Executor,
  JobEnd,
  Observation,
  ObservedJob,
  ObservedTask,
  StepOutcome,
  StepRequest,
} from '../runtime/backend';
import type { JobSpec } from '../runtime/job-spec';
import type { RolloutStep } from '../runtime/rollout/next-step';
import { shapeOf, type JobTarget, type TargetTask } from '../runtime/rollout/target';
import { JobFiles } from './job-files';
import type { PidRegistry } from './processes';
import { spawnNode, stopProcess, type Spawned } from './processes';
import type { SidecarSettings } from './sidecar-process';
import { LocalSidecars } from './sidecars';
import { trainerConfig } from './task-config';
import type { TrainerConfig } from './trainer/config';

/** Wall ms after a step before the runtime looks again (the processes also say when they change). */
const REQUEUE_MS = 100;

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
  /** A start fault to emulate per job (the runtime contract's failure cases), or null. */
  readonly faultOf?: (jobId: string) => TrainerConfig['fault'];
}

interface TaskProcs {
  readonly placement: TaskPlacement;
  /** The target generation it was started for. */
  readonly generation: number;
  readonly trainer: Spawned;
  readonly sidecar: Spawned | null;
  /** Set once we asked it to stop: it holds its server until it and its sidecar are gone. */
  stopping: boolean;
  /** Set until the task reported that it runs: an exit before that is a failed start, not the job's. */
  starting: boolean;
  /** The trainer's exit code once it exited on its own; null while it runs. */
  exit: number | null;
}

interface LocalJob {
  readonly spec: JobSpec;
  readonly files: JobFiles;
  tasks: TaskProcs[];
  /** How the training program ended on its own (worker 0 exit 0, or a task failed), once it did. */
  exited: JobEnd | null;
  /** Recorded by a `record-end` step. */
  finished: JobEnd | null;
}

export class LocalBackend implements Backend {
  readonly executor: Executor = { step: (r) => Promise.resolve(this.step(r)) };
  private readonly jobs = new Map<string, LocalJob>();
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
      const tasks: ObservedTask[] = j.tasks.map((t) => ({
        ...t.placement,
        generation: t.generation,
        state: taskState(t),
      }));
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
      exited: null,
      finished: null,
    });
  }

  /** Stops everything of the job (its trainers checkpoint, its sidecars drain), then forgets it. */
  async remove(jobId: string): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job) return;
    await this.stopAll(job);
    this.jobs.delete(jobId);
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

  /** One rollout step, carried out at once: signals sent, processes spawned; nothing waited for. */
  private step(r: StepRequest): StepOutcome {
    const job = this.jobs.get(r.jobId);
    if (!job) return { kind: 'failed', error: `unknown job ${r.jobId}` };
    try {
      this.apply(job, r.target, r.step);
      return { kind: 'done', requeueAfterMs: REQUEUE_MS };
    } catch (err) {
      return { kind: 'failed', error: err instanceof Error ? err.message : String(err) };
    }
  }

  private apply(job: LocalJob, target: JobTarget, step: RolloutStep): void {
    switch (step.kind) {
      case 'record-end':
        job.finished = step.end;
        return;
      case 'stop':
        for (const o of step.tasks) {
          const t = job.tasks.find(
            (x) =>
              !x.stopping &&
              x.placement.role === o.role &&
              x.placement.index === o.index &&
              x.generation === o.generation,
          );
          if (t) this.retire(job, t);
        }
        return;
      case 'start': {
        if (job.finished) throw new Error(`job ${job.spec.namespace}/${job.spec.name} has finished`);
        const shape = shapeOf(target);
        if (!shape) throw new Error('the target is not a whole set (no PS or no worker)');
        this.checkServers(step.tasks);
        // Idempotent: a task already started for this generation is not started twice.
        const missing = step.tasks.filter(
          (t) =>
            !job.tasks.some(
              (x) =>
                !x.stopping &&
                x.placement.role === t.role &&
                x.placement.index === t.index &&
                x.generation === t.generation,
            ),
        );
        // A new set is a new run of the program: whatever it said of its end before is past.
        if (missing.length > 0) job.exited = null;
        for (const t of missing) job.tasks.push(this.startTask(job, t, shape));
        return;
      }
    }
  }

  /**
   * Stops one task without waiting: SIGTERM (the trainer checkpoints and exits; SIGKILL after the
   * grace), then its sidecar drains and exits; only then is it gone from the table (it held its
   * server until then) and the runtime is told.
   */
  private retire(job: LocalJob, t: TaskProcs): void {
    t.stopping = true;
    void (async () => {
      await stopProcess(t.trainer);
      await this.stopSidecar(job, t);
      job.tasks = job.tasks.filter((x) => x !== t);
      this.events?.changed();
    })().catch(this.report);
  }

  private startTask(job: LocalJob, p: TargetTask, shape: { ps: number; workers: number }): TaskProcs {
    const { spec, files } = job;
    const placement: TaskPlacement = { role: p.role, index: p.index, server: p.server };
    const cfg = trainerConfig({
      spec,
      files,
      placement,
      shape,
      generation: p.generation,
      timeScale: this.o.timeScale,
      restartCostSec: this.o.restartCostSec,
      withSidecar: this.o.sidecar !== null,
      fault: this.o.faultOf?.(`${spec.namespace}/${spec.name}`) ?? null,
    });
    const env = {
      ...process.env,
      OPTIMUS_TRAINER_CONFIG: JSON.stringify(cfg),
      OPTIMUS_LOCAL_MARKER: this.o.marker,
      OPTIMUS_GENERATION: String(p.generation),
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
      placement,
      generation: p.generation,
      trainer,
      sidecar,
      stopping: false,
      starting: true,
      exit: null,
    };
    void trainer.ready
      .then((ready) => {
        if (!ready || procs.exit !== null) return;
        procs.starting = false;
        this.events?.changed();
      })
      .catch(this.report);
    void trainer.exited.then((code) => this.onTrainerExit(job, procs, code)).catch(this.report);
    return procs;
  }

  /**
   * A trainer that exits on its own is observed, not acted on: before it said it runs, a failed
   * start (the task is `failed`); after, worker 0's exit 0 means the program reached its end and any
   * other exit is a failed task. The runtime decides what follows (and stops the rest through the
   * executor).
   */
  private onTrainerExit(job: LocalJob, procs: TaskProcs, code: number): void {
    try {
      this.o.pids.delete(procs.trainer.child.pid);
    } catch (err) {
      this.report(err); // bookkeeping only: the exit below still counts
    }
    if (procs.stopping || !job.tasks.includes(procs)) return;
    const { role, index } = procs.placement;
    // 143: stopped by a signal from outside (it checkpointed), like a pod evicted: not the job's end.
    if (code === 143 && !procs.starting) {
      job.tasks = job.tasks.filter((t) => t !== procs);
      void this.stopSidecar(job, procs).catch(this.report);
    } else {
      procs.exit = procs.starting && code === 0 ? -1 : code; // an exit before it ran is a failed start
      if (!procs.starting && code === 0 && role === 'worker' && index === 0)
        job.exited ??= {
          outcome: 'succeeded',
          reason: 'WorkersSucceeded',
          message: 'worker 0 finished training',
        };
      else if (!procs.starting && code !== 0)
        job.exited ??= {
          outcome: 'failed',
          reason: 'TaskFailed',
          message: `${role} ${index} exited with code ${code}`,
        };
    }
    this.events?.changed();
  }

  private readonly report = (err: unknown): void => this.o.onError?.(err);

  /** Stops every task and waits: trainers checkpoint on SIGTERM; sidecars drain their log and exit. */
  private async stopAll(job: LocalJob): Promise<void> {
    const tasks = job.tasks;
    for (const t of tasks) t.stopping = true;
    await Promise.all(tasks.map((t) => stopProcess(t.trainer)));
    await Promise.all(tasks.map((t) => this.stopSidecar(job, t)));
    job.tasks = job.tasks.filter((t) => !tasks.includes(t));
  }

  private async stopSidecar(job: LocalJob, t: TaskProcs): Promise<void> {
    if (t.sidecar) await this.sidecars?.stop(job.files, t.placement.index, t.sidecar);
  }

  private checkServers(placement: readonly TaskPlacement[]): void {
    const known = new Set(this.o.servers.map((s) => s.name));
    const bad = placement.find((p) => !known.has(p.server));
    if (bad) throw new Error(`unknown server ${bad.server}`);
  }
}

function taskState(t: TaskProcs): ObservedTask['state'] {
  if (t.stopping) return 'stopping';
  if (t.exit !== null) return t.exit === 0 ? 'succeeded' : 'failed';
  return t.starting ? 'pending' : 'running';
}
