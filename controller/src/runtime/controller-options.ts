/** What a composition root hands the controller runtime, and the error it throws for a client's mistake. */
import type { Logger } from 'pino';
import type { Backend, StateStore } from './backend';
import type { Clock, Timers } from './clock';
import type { Core } from './core';
import type { JobSpec } from './job-spec';
import type { RoundContext } from './round';

/** Publishes to the broker; the MQTT adapter implements it. */
export interface Publisher {
  publish(topic: string, payload: string, opts: { retain: boolean }): Promise<void>;
  /** True when nobody can receive what is published (the simulator): plans are not even built. */
  readonly discards?: boolean;
}

export interface ControllerOptions {
  readonly core: Core;
  readonly backend: Backend;
  readonly store: StateStore;
  readonly publisher: Publisher;
  /** Builds the clock from the persisted origin (or a new one). */
  readonly clock: (originMs: number | null) => Clock;
  readonly log: Logger;
  readonly id: string;
  readonly schedulingIntervalSec: number;
  /**
   * Job seconds a checkpoint → restart is assumed to cost a job until its own rollouts measured
   * one (then the policy weighs the job's median, ADR 0035).
   */
  readonly restartCostSec: number;
  /**
   * Optional: the prior per job (a per-model table, say); absent: `restartCostSec` for every job.
   * Must be pure and cheap: it is asked every round for every job the policy decides.
   */
  readonly restartPrior?: (spec: JobSpec) => number;
  /** The pre-run (paper §3.2): sample shapes, their size, records per worker (see PRE_RUN_DEFAULTS). */
  readonly preRun?: Partial<RoundContext['preRun']>;
  /** Timers of the rounds and rollout timeouts (default: Node's; the simulator's are virtual). */
  readonly timers?: Timers;
  /** Rollouts in flight at most (default 8). */
  readonly rolloutConcurrency?: number;
  /**
   * Job seconds a job's target may take to be reached; then the rollout is given up and the job
   * re-planned (default 900). The only rollout timeout (ADR 0035).
   */
  readonly rolloutTimeoutSec?: number;
  /**
   * Wall ms between looks at a rollout that waits (for tasks to stop or run, for room), on top of
   * the backend's change notifications (default 2000; 0: notifications only, as in the simulator).
   */
  readonly rolloutPollMs?: number;
  /** Job seconds at least between two full rounds asked for by events (default 0). */
  readonly minRoundGapSec?: number;
}

/** Thrown for a client mistake (unknown job, duplicate); the HTTP layer maps it to 4xx. */
export class RuntimeError extends Error {
  constructor(
    readonly status: 404 | 409 | 400 | 422,
    message: string,
  ) {
    super(message);
  }
}
