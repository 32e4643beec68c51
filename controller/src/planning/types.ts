/**
 * A plan is the difference between what runs and what was decided, as data: the policy's language.
 * The runtime turns each job's actions into its target (`runtime/rollout/target.ts`), which the
 * backend's one executor steps toward (ADR 0035).
 */
import type { JobShape, TaskPlacement } from '../scheduling/types';

export type PlanAction =
  /** Start a job that holds nothing. */
  | {
      readonly kind: 'start';
      readonly jobId: string;
      readonly shape: JobShape;
      readonly placement: readonly TaskPlacement[];
    }
  /** Checkpoint, stop all tasks, start the new set (shape and/or placement change). */
  | {
      readonly kind: 'resize';
      readonly jobId: string;
      readonly from: JobShape;
      readonly shape: JobShape;
      readonly placement: readonly TaskPlacement[];
    }
  /** Checkpoint and stop: the job waits (it no longer fits). */
  | { readonly kind: 'suspend'; readonly jobId: string; readonly reason: string }
  /** Replace one straggling worker by a new one on `server`. */
  | {
      readonly kind: 'replace-worker';
      readonly jobId: string;
      readonly index: number;
      readonly server: string;
    }
  /**
   * The job is over: record it as finished where the backend keeps such records (first, so a crash
   * right after never starts it again), then stop whatever of it still runs — with a checkpoint when
   * the runtime ends a job that still trains (its convergence rule fired), at once when its program
   * already exited. Idempotent: the runtime repeats it until nothing of the job is observed.
   */
  | {
      readonly kind: 'finish';
      readonly jobId: string;
      readonly outcome: 'succeeded' | 'failed';
      readonly reason: string;
      readonly message: string;
      readonly checkpoint: boolean;
    };

export interface Plan {
  readonly actions: readonly PlanAction[];
}
