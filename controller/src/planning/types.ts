/**
 * A plan is the difference between what runs and what was decided, as data.
 * Exactly one executor per backend carries a plan out.
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
    };

export interface Plan {
  readonly actions: readonly PlanAction[];
}

export interface ExecutionResult {
  readonly applied: readonly PlanAction[];
  readonly failed: readonly { readonly action: PlanAction; readonly error: string }[];
}

/** One per backend (simulator, local processes, Kubernetes). The only writer to the cluster. */
export interface Executor {
  execute(plan: Plan): Promise<ExecutionResult>;
}
