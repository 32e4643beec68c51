/**
 * The two parts every policy is composed of (see `compose.ts`): an allocator decides each job's
 * shape against the cluster's aggregate pool; a placer puts the tasks of those shapes on servers.
 * Ablations and baselines are different pairs of parts, never branches on a policy name.
 */
import type { JobShape, TaskPlacement } from '../types';
import type { PreparedInput, PreparedJob } from './prepare';

export interface AllocationRequest {
  readonly input: PreparedInput;
  /** The jobs still in play this round (placement failures of earlier passes removed). */
  readonly jobs: readonly PreparedJob[];
}

export interface Allocation {
  readonly shapes: ReadonlyMap<string, JobShape>;
  /** Jobs that get nothing, with the reason. */
  readonly waiting: ReadonlyMap<string, string>;
  /**
   * The allocator's priority order of the jobs it gave a shape (queue baselines); the placer
   * receives its jobs in this order. Default: id order.
   */
  readonly order?: readonly string[];
}

export interface Allocator {
  readonly name: string;
  allocate(request: AllocationRequest): Allocation;
}

export interface PlacementJob {
  readonly job: PreparedJob;
  readonly shape: JobShape;
}

export interface PlacementRequest {
  readonly input: PreparedInput;
  /** In the allocator's `order` when it gives one, else in id order. */
  readonly jobs: readonly PlacementJob[];
  /** Free amount per server (index as in `input.servers`); the placer consumes it in place. */
  readonly free: Float64Array[];
}

export interface PlacementResult {
  readonly placed: ReadonlyMap<string, readonly TaskPlacement[]>;
  readonly unplaced: ReadonlyMap<string, string>;
  /** Jobs the placer ran at another shape than allocated (the shape actually placed). */
  readonly shrunk?: ReadonlyMap<string, JobShape>;
}

export interface Placer {
  readonly name: string;
  place(request: PlacementRequest): PlacementResult;
}
