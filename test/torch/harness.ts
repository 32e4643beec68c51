/**
 * Real PyTorch jobs for the tests and the restart benchmark: every task of a job is a real
 * `/usr/bin/python3` process running the reference trainers (charts/optimus/examples/pytorch), with
 * the environment the controller gives a pod (docs/training-contract.md §2 and §8, {@link trainerEnv})
 * and a free rendezvous port. Every line a task prints is kept with the time it arrived.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, watch } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { effectiveGlobalBatch, perWorkerBatch } from '../../controller/src/runtime/batch';
import { parseBuffer } from '../../sidecar/src/parse/parse-buffer';
import type { DraftRecord } from '../../sidecar/src/parse/assembler';

export const PYTHON = '/usr/bin/python3';
export const EXAMPLES = join(import.meta.dirname, '..', '..', 'charts', 'optimus', 'examples', 'pytorch');

/** Whether Debian's torch can be imported here, and if not, why (the tests say so when skipped). */
export function torchAvailability(): { readonly ok: boolean; readonly reason: string } {
  const r = spawnSync(PYTHON, ['-c', 'import torch, torch.distributed.rpc'], { encoding: 'utf8' });
  if (r.status === 0) return { ok: true, reason: '' };
  const why = r.error ? r.error.message : (r.stderr.trim().split('\n').pop() ?? `exit ${r.status}`);
  return { ok: false, reason: `${PYTHON} -c 'import torch' failed (${why}); apt-get install python3-torch` };
}

export type TrainerKind = 'allreduce' | 'ps';
export type Role = 'ps' | 'worker';

export interface Shape {
  readonly kind: TrainerKind;
  /** 0 for all-reduce. */
  readonly ps: number;
  readonly workers: number;
  readonly mode: 'sync' | 'async';
}

export const allreduce = (workers: number): Shape => ({ kind: 'allreduce', ps: 0, workers, mode: 'sync' });
export const paramServer = (ps: number, workers: number, mode: 'sync' | 'async'): Shape => ({
  kind: 'ps',
  ps,
  workers,
  mode,
});
export const shapeText = (s: Shape): string =>
  s.kind === 'allreduce' ? `${s.workers} ranks` : `${s.ps} PS × ${s.workers} workers ${s.mode}`;

export interface TrainerEnvOptions {
  readonly shape: Shape;
  readonly role: Role;
  readonly index: number;
  /** The job's `spec.batchSize` (sync: the global batch; async: one worker's). */
  readonly batchSize: number;
  readonly masterPort: number;
  readonly checkpointDir: string;
  readonly graceSeconds: number;
}

/**
 * The environment of one task: what the controller must set for the reference trainers (the
 * variables of docs/training-contract.md §2 plus torchrun's for all-reduce). PS k is rank k and
 * worker i rank P + i in the RPC world; an all-reduce worker's rank is its index.
 */
export function trainerEnv(o: TrainerEnvOptions): Record<string, string> {
  const { shape, role, index } = o;
  const env: Record<string, string> = {
    OPTIMUS_ROLE: role,
    OPTIMUS_INDEX: String(index),
    OPTIMUS_NUM_PS: String(shape.ps),
    OPTIMUS_NUM_WORKERS: String(shape.workers),
    OPTIMUS_MODE: shape.mode,
    OPTIMUS_BATCH_SIZE: String(perWorkerBatch(shape.mode, o.batchSize, shape.workers)),
    OPTIMUS_GLOBAL_BATCH_SIZE: String(effectiveGlobalBatch(shape.mode, o.batchSize, shape.workers)),
    OPTIMUS_CHECKPOINT_DIR: o.checkpointDir,
    OPTIMUS_GRACE_SECONDS: String(o.graceSeconds),
    MASTER_ADDR: '127.0.0.1',
    MASTER_PORT: String(o.masterPort),
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1', // no __pycache__ beside the shipped examples
    OMP_NUM_THREADS: '1',
  };
  if (shape.kind === 'allreduce') {
    env['WORLD_SIZE'] = String(shape.workers);
    env['RANK'] = String(index);
    env['LOCAL_RANK'] = String(index); // every rank on this one machine
  }
  return env;
}

/** A port nobody listens on now (the trainers' rank 0 binds it a moment later). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface Line {
  /** performance.now() when the line arrived. */
  readonly at: number;
  readonly text: string;
}

/** One task's process: its output so far and its end. */
export class Task {
  readonly stdout: Line[] = [];
  stderr = '';
  readonly startedAt = performance.now();
  exitedAt: number | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = '';

  constructor(
    readonly role: Role,
    readonly index: number,
    readonly child: ChildProcess,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.take(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.exitedAt = performance.now();
        resolve({ code, signal });
      }),
    );
  }

  get name(): string {
    return `${this.role} ${this.index}`;
  }

  get running(): boolean {
    return this.exitedAt === null;
  }

  /** Records of this task's stdout as the real sidecar parser reads them (format `auto`). */
  records(): DraftRecord[] {
    return parseBuffer(Buffer.from(this.stdout.map((l) => `${l.text}\n`).join(''))).records;
  }

  /** The parsed JSON lines with their arrival time. */
  json(): { at: number; value: Record<string, unknown> }[] {
    const out: { at: number; value: Record<string, unknown> }[] = [];
    for (const l of this.stdout) {
      if (!l.text.startsWith('{')) continue; // the trainers print only records on stdout
      out.push({ at: l.at, value: JSON.parse(l.text) as Record<string, unknown> });
    }
    return out;
  }

  /** Arrival time of the first line whose JSON satisfies `pred`, or null. */
  firstAt(pred: (v: Record<string, unknown>) => boolean): number | null {
    return this.json().find((l) => pred(l.value))?.at ?? null;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) this.child.kill(sig);
  }

  private take(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    const at = performance.now();
    for (const text of parts) if (text.length > 0) this.stdout.push({ at, text });
  }
}

const live = new Set<Task>();

/** SIGKILLs every task still running (tests call it in afterEach: no test leaves a process). */
export async function killAll(): Promise<void> {
  const tasks = [...live];
  for (const t of tasks) t.signal('SIGKILL');
  await Promise.all(tasks.map((t) => t.exited));
}

export interface JobOptions {
  readonly shape: Shape;
  readonly batchSize: number;
  readonly checkpointDir: string;
  /** Trainer arguments (e.g. `--log-every 1`). */
  readonly args?: readonly string[];
  /** More arguments and environment for one task (e.g. worker 0's `--log-file`). */
  readonly perTask?: (
    role: Role,
    index: number,
  ) => { args?: readonly string[]; env?: Record<string, string> };
  readonly graceSeconds?: number;
}

/** One generation of a job: every task started at once, as the controller starts a new shape. */
export class Generation {
  private constructor(
    readonly shape: Shape,
    readonly tasks: readonly Task[],
  ) {}

  static async start(o: JobOptions): Promise<Generation> {
    const masterPort = await freePort();
    const script = join(EXAMPLES, o.shape.kind === 'allreduce' ? 'ddp_train.py' : 'ps_train.py');
    const roles: [Role, number][] = [
      ...Array.from({ length: o.shape.ps }, (_, k): [Role, number] => ['ps', k]),
      ...Array.from({ length: o.shape.workers }, (_, i): [Role, number] => ['worker', i]),
    ];
    const tasks = roles.map(([role, index]) => {
      const env = trainerEnv({
        shape: o.shape,
        role,
        index,
        batchSize: o.batchSize,
        masterPort,
        checkpointDir: o.checkpointDir,
        graceSeconds: o.graceSeconds ?? 20,
      });
      const own = o.perTask?.(role, index) ?? {};
      const child = spawn(PYTHON, [script, ...(o.args ?? []), ...(own.args ?? [])], {
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          HOME: process.env['HOME'] ?? '/tmp',
          ...env,
          ...own.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const task = new Task(role, index, child);
      live.add(task);
      void task.exited.then(() => live.delete(task));
      return task;
    });
    return new Generation(o.shape, tasks);
  }

  get workers(): Task[] {
    return this.tasks.filter((t) => t.role === 'worker');
  }

  get worker0(): Task {
    return this.workers[0]!;
  }

  /** SIGTERM to every task at once (Kubernetes deletes all pods of a job together), or one by one. */
  async stop(o: { gapMs?: number; signal?: NodeJS.Signals } = {}): Promise<void> {
    for (const t of this.tasks) {
      t.signal(o.signal ?? 'SIGTERM');
      if (o.gapMs) await new Promise((r) => setTimeout(r, o.gapMs));
    }
  }

  /** Every task's exit code (null: killed by a signal). */
  async exitCodes(): Promise<(number | null)[]> {
    return (await Promise.all(this.tasks.map((t) => t.exited))).map((e) => e.code);
  }

  /** Resolves once worker 0 printed a batch record of at least `step`; rejects if it ends first. */
  async untilStep(step: number, timeoutMs = 120_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (
        this.worker0.json().some((l) => l.value['kind'] === 'batch' && Number(l.value['global_step']) >= step)
      )
        return;
      const dead = this.tasks.find((t) => !t.running);
      if (dead) throw new Error(`${dead.name} exited before step ${step}:\n${dead.stderr.slice(-2000)}`);
      if (performance.now() > deadline) throw new Error(`no step ${step} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** All tasks' stderr, for failure messages. */
  stderr(): string {
    return this.tasks.map((t) => `--- ${t.name}\n${t.stderr.slice(-1500)}`).join('\n');
  }
}

/** Global step of a parsed record (the trainers' exact counter, a metric on the wire). */
export const globalStep = (r: DraftRecord): number => r.metrics['global_step'] ?? Number.NaN;

/** The newest checkpoint of `dir` as the trainers' own `inspect` reads it (null: none). */
export function inspectCheckpoint(dir: string): { path: string; step: number; bytes: number } | null {
  const r = spawnSync(PYTHON, [join(EXAMPLES, 'optimus_torch.py'), 'inspect', dir], { encoding: 'utf8' });
  if (r.status !== 0 && r.stdout.trim() !== 'null') throw new Error(`inspect failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { path: string; step: number; bytes: number } | null;
}

const isPartial = (name: string): boolean => name.includes('.pt.tmp-');

/** True once the kernel reports `pid` stopped (state T in /proc/<pid>/stat), within 10 s. */
async function stopped(pid: number): Promise<boolean> {
  // By the clock, not a count of polls: on a loaded machine a 5 ms timer fires much later.
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}

/**
 * SIGKILLs `task` while it is writing a checkpoint into `dir`, for certain: on each temporary file it
 * creates, the task is SIGSTOPped, and killed only if the temporary file is still there while it
 * cannot move (else it continues, and the next write is tried). Linux (/proc) only.
 */
export function killMidWrite(dir: string, task: Task): Promise<void> {
  const pid = task.child.pid!;
  return new Promise((resolve, reject) => {
    let busy = false;
    const watcher = watch(dir, (_event, name) => {
      if (busy || !name || !isPartial(name)) return;
      busy = true;
      task.signal('SIGSTOP');
      void stopped(pid)
        .then((ok) => {
          if (!ok) throw new Error(`${task.name} did not stop`);
          if (readdirSync(dir).some(isPartial)) {
            task.signal('SIGKILL');
            watcher.close();
            resolve();
          } else {
            task.signal('SIGCONT');
            busy = false;
          }
        })
        .catch((err: unknown) => {
          watcher.close();
          reject(err instanceof Error ? err : new Error(String(err)));
        });
    });
  });
}
