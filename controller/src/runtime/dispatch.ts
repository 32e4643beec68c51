/**
 * Assume, then confirm or forget (as Kueue assumes a workload in its cache before the API write):
 * a decided job's actions are handed to the executor without waiting, and while they run the job's
 * target is *assumed* — its resources held in every round's snapshot, the job left out of the
 * policy. Rounds go on meanwhile; several jobs' rollouts run in parallel, bounded. A rollout that
 * fails is forgotten (the next observation shows what is left, and the job is re-planned); one that
 * never confirms is aborted and forgotten after a timeout. A slow resize never stalls other jobs.
 */
import type { ExecutionResult, Executor, PlanAction } from '../planning/types';
import type { TimerHandle, Timers } from './clock';
import type { CurrentJob } from './core';

/** What a job is assumed to hold while its rollout runs. */
export interface Assumed {
  readonly jobId: string;
  readonly actions: readonly PlanAction[];
  /** What the job holds once its actions are applied; null when they stop it. */
  readonly target: CurrentJob | null;
  /** Wall-clock ms of the dispatch. */
  readonly sinceMs: number;
  /** What to record in the job's intent once every action applied (the caller runs it). */
  readonly confirm?: (() => void) | undefined;
}

/** How one job's rollout ended. */
export interface Settled {
  readonly jobId: string;
  readonly assumed: Assumed;
  readonly applied: readonly PlanAction[];
  readonly failed: readonly { readonly action: PlanAction; readonly error: string }[];
  /** True when the runtime gave up waiting (the executor was told to stop). */
  readonly timedOut: boolean;
}

export interface DispatcherOptions {
  readonly executor: Executor;
  readonly timers: Timers;
  readonly wallMs: () => number;
  /** Rollouts in flight at most; more wait for a later round (which plans them again). */
  readonly maxInFlight: number;
  /** Wall-clock ms after which a rollout that has not settled is aborted and forgotten. */
  readonly timeoutMs: number;
  /** Called once per dispatched job, when its rollout settles or times out. Must not throw. */
  readonly onSettled: (s: Settled) => void;
}

interface Flight {
  readonly assumed: Assumed;
  readonly abort: AbortController;
  readonly timer: TimerHandle;
  /** Settles when the executor returns, whatever the runtime decided meanwhile. */
  readonly done: Promise<void>;
}

export class Dispatcher {
  private readonly flights = new Map<string, Flight>();
  /** Jobs whose rollout was given up but whose executor call has not returned yet. */
  private readonly abandoned = new Map<string, Promise<void>>();

  constructor(private readonly o: DispatcherOptions) {}

  /** The assumption of a job whose rollout runs, if any. */
  assumed(jobId: string): Assumed | undefined {
    return this.flights.get(jobId)?.assumed;
  }

  /** True while a job has a rollout in flight or an abandoned one the executor still works on. */
  busy(jobId: string): boolean {
    return this.flights.has(jobId) || this.abandoned.has(jobId);
  }

  get inFlight(): number {
    return this.flights.size;
  }

  /** Every assumption in flight. */
  all(): Assumed[] {
    return [...this.flights.values()].map((f) => f.assumed);
  }

  /**
   * Hands one job's actions to the executor. False (nothing dispatched) when the job is busy or
   * the bound is reached: the caller leaves the job as it is observed and plans it again later.
   */
  dispatch(
    jobId: string,
    actions: readonly PlanAction[],
    target: CurrentJob | null,
    confirm?: () => void,
  ): boolean {
    if (actions.length === 0 || this.busy(jobId) || this.flights.size >= this.o.maxInFlight) return false;
    const assumed: Assumed = { jobId, actions, target, sinceMs: this.o.wallMs(), confirm };
    const abort = new AbortController();
    let settled = false;
    const finish = (s: Omit<Settled, 'jobId' | 'assumed'>): void => {
      if (settled) return;
      settled = true;
      this.o.timers.clearTimeout(timer);
      this.flights.delete(jobId);
      this.o.onSettled({ jobId, assumed, ...s });
    };
    const timer = this.o.timers.setTimeout(() => {
      abort.abort(new Error(`rollout did not confirm within ${Math.round(this.o.timeoutMs / 1000)} s`));
      this.abandoned.set(jobId, done);
      finish({
        applied: [],
        failed: actions.map((action) => ({
          action,
          error: `timed out after ${Math.round(this.o.timeoutMs / 1000)} s`,
        })),
        timedOut: true,
      });
    }, this.o.timeoutMs);
    const done = this.run(actions, abort.signal).then((r) => {
      if (this.abandoned.get(jobId) === done) this.abandoned.delete(jobId);
      finish({ applied: r.applied, failed: r.failed, timedOut: false });
    });
    this.flights.set(jobId, { assumed, abort, timer, done });
    return true;
  }

  /** Resolves once the job's rollout (in flight or abandoned) has returned from the executor. */
  async settledFor(jobId: string): Promise<void> {
    await this.flights.get(jobId)?.done;
    await this.abandoned.get(jobId);
  }

  /** Resolves once nothing is in flight (tests, the simulator, shutdown). */
  async idle(): Promise<void> {
    while (this.flights.size > 0 || this.abandoned.size > 0)
      await Promise.all([...[...this.flights.values()].map((f) => f.done), ...this.abandoned.values()]);
  }

  /** Asks every rollout in flight to stop (shutdown); their results still arrive. */
  abortAll(): void {
    for (const f of this.flights.values()) f.abort.abort(new Error('the controller is stopping'));
  }

  /** The executor call, never rejecting: a throw is a failure of every action. */
  private async run(actions: readonly PlanAction[], signal: AbortSignal): Promise<ExecutionResult> {
    try {
      return await this.o.executor.execute({ actions }, { signal });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      return { applied: [], failed: actions.map((action) => ({ action, error })) };
    }
  }
}
