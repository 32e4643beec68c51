/**
 * Simulation runs in parallel: independent (seed, variant) runs spread over worker threads, one per
 * core, each running the same `simulate` on its own copy of the trace. Results are data, so what a
 * worker returns is what the run would have returned in process; the order of completion does not
 * change any figure. Falls back to running in process where no worker module is available.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PolicyOptions } from '../scheduling/registry';
import type { SimulationOptions, SimulationResult } from './engine';
import type { Estimation } from './estimator';
import type { Trace } from './trace';

/** One run, as plain data a worker can receive. */
export interface RunTask {
  readonly id: number;
  readonly trace: Trace;
  readonly seed: number;
  readonly policy: string;
  readonly options: PolicyOptions;
  readonly estimation: Estimation;
  readonly intervalSec?: number;
  readonly restartPauseSec?: number;
  readonly speedNoise?: number;
  readonly minRoundGapSec: number;
  readonly watchJob?: string;
  readonly preRunBudget?: number;
}

/**
 * The simulation of one run, the same in a worker thread and in this one; the caller supplies what
 * cannot cross a thread (the policy object, the measured speeds, the models) and the progress sink.
 */
export function simulationOf(
  task: RunTask,
  env: Pick<SimulationOptions, 'measured' | 'models' | 'policy' | 'onProgress'>,
): SimulationOptions {
  return {
    ...env,
    trace: task.trace,
    estimation: task.estimation,
    seed: task.seed,
    ...(task.intervalSec === undefined ? {} : { intervalSec: task.intervalSec }),
    ...(task.restartPauseSec === undefined ? {} : { restartPauseSec: task.restartPauseSec }),
    ...(task.speedNoise === undefined ? {} : { speedNoise: task.speedNoise }),
    minRoundGapSec: task.minRoundGapSec,
    ...(task.watchJob === undefined ? {} : { watchJob: task.watchJob }),
    ...(task.preRunBudget === undefined ? {} : { preRun: { budget: task.preRunBudget } }),
  };
}

export type WorkerMessage =
  | { readonly type: 'progress'; readonly id: number; readonly fraction: number }
  | { readonly type: 'done'; readonly id: number; readonly result: SimulationResult }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

const WORKER = new URL('./run-worker-boot.mjs', import.meta.url);

/** How many workers to use by default: one per core, at most the number of runs. */
export function defaultWorkers(runs: number): number {
  return Math.max(1, Math.min(availableParallelism(), runs));
}

/** True when runs can go to worker threads here (the worker module exists beside this one). */
export function workersAvailable(): boolean {
  return WORKER.protocol === 'file:' && existsSync(fileURLToPath(WORKER));
}

/**
 * Runs `tasks` on `workers` threads; `onProgress(id, fraction)` while each runs. A failed run
 * rejects its own promise only.
 */
export function runInWorkers(
  tasks: readonly RunTask[],
  o: { workers: number; measuredPath?: string; onProgress?: (id: number, fraction: number) => void },
): Promise<SimulationResult>[] {
  const pending = [...tasks];
  const settle = new Map<number, { resolve: (r: SimulationResult) => void; reject: (e: Error) => void }>();
  const promises = tasks.map(
    (t) => new Promise<SimulationResult>((resolve, reject) => settle.set(t.id, { resolve, reject })),
  );
  const startWorker = (): void => {
    // The worker inherits this process's loader flags (tsx), so it runs the TypeScript sources.
    const w = new Worker(WORKER, { workerData: { measuredPath: o.measuredPath } });
    const next = (): void => {
      const task = pending.shift();
      if (task) w.postMessage(task);
      else void w.terminate();
    };
    w.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') return o.onProgress?.(m.id, m.fraction);
      const s = settle.get(m.id);
      if (m.type === 'done') s?.resolve(m.result);
      else s?.reject(new Error(m.error));
      next();
    });
    w.on('error', (err) => {
      for (const s of settle.values()) s.reject(err);
    });
    next();
  };
  for (let i = 0; i < Math.min(o.workers, tasks.length); i += 1) startWorker();
  return promises;
}
