/**
 * The local backend: emulated servers, and every task of every job as real child processes
 * (the emulated MXNet trainer, plus the real sidecar bundle beside each worker).
 */
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ExecutionResult, Executor, Plan, PlanAction } from '../planning/types';
import type { ServerSnapshot, TaskPlacement } from '../scheduling/types';
import type { Backend, BackendEvents } from '../runtime/backend';
import type { CurrentJob } from '../runtime/core';
import type { JobSpec } from '../runtime/job-spec';
import { JobFiles } from './job-files';
import type { PidRegistry } from './processes';
import { awaitOrStop, spawnNode, stopProcess, type Spawned } from './processes';
import { spawnSidecar, type SidecarSettings } from './sidecar-process';
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
}

interface TaskProcs {
  readonly placement: TaskPlacement;
  readonly trainer: Spawned;
  readonly sidecar: Spawned | null;
}

interface LocalJob {
  readonly spec: JobSpec;
  readonly files: JobFiles;
  tasks: TaskProcs[];
  current: CurrentJob | null;
  restarts: number;
  /** Set while we stop tasks on purpose, so their exits are not mistaken for completion or failure. */
  stopping: boolean;
  finished: boolean;
}

export class LocalBackend implements Backend {
  readonly executor: Executor = { execute: (plan) => this.execute(plan) };
  private readonly jobs = new Map<string, LocalJob>();
  private events: BackendEvents | null = null;

  constructor(private readonly o: LocalBackendOptions) {}

  attach(events: BackendEvents): void {
    this.events = events;
  }

  async servers(): Promise<ServerSnapshot[]> {
    return this.o.servers.map((s) => ({ name: s.name, capacity: s.capacity, reserved: {} }));
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
      stopping: false,
      finished: false,
    });
  }

  async remove(jobId: string): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job) return;
    await this.stopAll(job);
    this.jobs.delete(jobId);
  }

  /** What runs now, per job. */
  running(): Map<string, CurrentJob> {
    const out = new Map<string, CurrentJob>();
    for (const [id, j] of this.jobs) if (j.current) out.set(id, j.current);
    return out;
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

  /**
   * After a crash of the previous controller: every worker log of every job directory gets a
   * short-lived sidecar with the done marker set, which resends what its outbox still holds and
   * reads the log to its end, then exits. Run before the first round so no two sidecars ever
   * share a task's state.
   */
  async drainLeftovers(): Promise<number> {
    if (!this.o.sidecar) return 0;
    const drains: Promise<number>[] = [];
    for (const { namespace, name, files, index } of JobFiles.scan(this.o.root)) {
      // The sidecar (as of this writing) saves its read position only after reading some bytes;
      // one line of ours makes sure it does, so the next sidecar of the task resumes, not re-reads.
      appendFileSync(
        files.log(index),
        `${new Date().toISOString()} optimus-local: controller restarted; delivering the rest of this log\n`,
      );
      writeFileSync(files.doneMarker(index), '');
      const s = this.spawnSidecar({ namespace, name, files, index, perWorkerBatch: 1 });
      drains.push(awaitOrStop(s, 15_000));
    }
    await Promise.all(drains);
    return drains.length;
  }

  async close(): Promise<void> {
    await Promise.all([...this.jobs.values()].map((j) => this.stopAll(j)));
  }

  private async execute(plan: Plan): Promise<ExecutionResult> {
    const outcome = new Map<PlanAction, string | null>();
    const byJob = new Map<string, PlanAction[]>();
    for (const a of plan.actions) byJob.set(a.jobId, [...(byJob.get(a.jobId) ?? []), a]);
    // Jobs are independent: their actions run concurrently; one job's actions run in order.
    await Promise.all(
      [...byJob].map(async ([, actions]) => {
        for (const a of actions)
          outcome.set(
            a,
            await this.apply(a).then(
              () => null,
              (e: unknown) => (e as Error).message,
            ),
          );
      }),
    );
    const applied = plan.actions.filter((a) => outcome.get(a) === null);
    const failed = plan.actions.flatMap((a) => {
      const error = outcome.get(a);
      return error ? [{ action: a, error }] : [];
    });
    return { applied, failed };
  }

  private async apply(a: PlanAction): Promise<void> {
    const job = this.jobs.get(a.jobId);
    if (!job) throw new Error(`unknown job ${a.jobId}`);
    if (job.finished) throw new Error(`job ${a.jobId} has finished`);
    switch (a.kind) {
      case 'start':
        if (job.current) throw new Error(`job ${a.jobId} is already running`);
        this.startAll(job, { shape: a.shape, placement: a.placement });
        return;
      case 'resize':
        await this.stopAll(job);
        job.restarts += 1;
        this.startAll(job, { shape: a.shape, placement: a.placement });
        return;
      case 'suspend':
        await this.stopAll(job);
        return;
      case 'replace-worker':
        await this.replaceWorker(job, a.index, a.server);
    }
  }

  private startAll(job: LocalJob, current: CurrentJob): void {
    this.checkServers(current.placement);
    job.stopping = false;
    job.current = { shape: { ...current.shape }, placement: current.placement.map((p) => ({ ...p })) };
    job.tasks = current.placement.map((p) => this.startTask(job, p));
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
    });
    this.o.pids.add(trainer.child.pid, `${spec.name} ${p.role}-${p.index}`);
    const sidecar = p.role === 'worker' ? this.startSidecar(job, p.index, cfg) : null;
    const procs: TaskProcs = { placement: p, trainer, sidecar };
    void trainer.exited.then((code) => this.onTrainerExit(job, procs, code)).catch(this.report);
    return procs;
  }

  private startSidecar(job: LocalJob, index: number, cfg: TrainerConfig): Spawned | null {
    if (!this.o.sidecar) return null;
    const { files, spec } = job;
    files.seedSidecarState(index);
    const perWorkerBatch =
      spec.mode === 'sync' ? Math.max(1, Math.round(spec.batchSize / cfg.workers)) : spec.batchSize;
    return this.spawnSidecar({ namespace: spec.namespace, name: spec.name, files, index, perWorkerBatch });
  }

  private spawnSidecar(o: {
    namespace: string;
    name: string;
    files: JobFiles;
    index: number;
    perWorkerBatch: number;
  }): Spawned {
    const s = spawnSidecar({ ...o, ...this.o.sidecar!, marker: this.o.marker });
    this.o.pids.add(s.child.pid, `${o.name} sidecar-${o.index}`);
    void s.exited.then(() => this.o.pids.delete(s.child.pid)).catch(this.report);
    return s;
  }

  private onTrainerExit(job: LocalJob, procs: TaskProcs, code: number): void {
    try {
      this.o.pids.delete(procs.trainer.child.pid);
    } catch (err) {
      this.report(err); // bookkeeping only: the exit below still counts
    }
    if (job.stopping || job.finished || !job.tasks.includes(procs)) return;
    const id = `${job.spec.namespace}/${job.spec.name}`;
    const w0 = procs.placement.role === 'worker' && procs.placement.index === 0;
    if (code === 0 && !w0) return; // the other workers converge with worker 0
    // 143: stopped by a signal from outside (it checkpointed); not a failure of the job.
    if (code === 143) return;
    job.finished = true;
    // The job is over even if stopping its other tasks failed: report it either way.
    void this.stopAll(job)
      .catch(this.report)
      .then(() => this.events?.onJobFinished(id, code === 0 ? 'succeeded' : 'failed'))
      .catch(this.report);
  }

  private readonly report = (err: unknown): void => this.o.onError?.(err);

  /** Stops every task: trainers checkpoint on SIGTERM; sidecars drain their log and exit. */
  private async stopAll(job: LocalJob): Promise<void> {
    job.stopping = true;
    const tasks = job.tasks;
    await Promise.all(tasks.map((t) => stopProcess(t.trainer)));
    await Promise.all(tasks.map((t) => this.stopSidecar(job, t)));
    job.tasks = [];
    job.current = null;
  }

  private async stopSidecar(job: LocalJob, t: TaskProcs): Promise<void> {
    if (!t.sidecar) return;
    writeFileSync(job.files.doneMarker(t.placement.index), '');
    await awaitOrStop(t.sidecar, 10_000);
  }

  private async replaceWorker(job: LocalJob, index: number, server: string): Promise<void> {
    const old = job.tasks.find((t) => t.placement.role === 'worker' && t.placement.index === index);
    if (!old || !job.current) throw new Error(`job has no running worker ${index}`);
    this.checkServers([{ role: 'worker', index, server }]);
    job.tasks = job.tasks.filter((t) => t !== old);
    await stopProcess(old.trainer);
    await this.stopSidecar(job, old);
    const placement: TaskPlacement = { role: 'worker', index, server };
    job.current = {
      ...job.current,
      placement: job.current.placement.map((p) => (p.role === 'worker' && p.index === index ? placement : p)),
    };
    job.tasks.push(this.startTask(job, placement));
  }

  private checkServers(placement: readonly TaskPlacement[]): void {
    const known = new Set(this.o.servers.map((s) => s.name));
    const bad = placement.find((p) => !known.has(p.server));
    if (bad) throw new Error(`unknown server ${bad.server}`);
  }
}
