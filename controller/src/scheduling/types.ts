/**
 * The one policy contract shared by the simulator, the local mode and Kubernetes.
 * A policy is pure: `decide(input) → decision`. Time comes in as `input.now`.
 */
import type { Resources } from '../../../shared/src/units';
import type { SpeedModel, TrainingMode } from '../models/speed/types';

export type TaskRole = 'ps' | 'worker';

/** Where one task of a job runs. */
export interface TaskPlacement {
  readonly role: TaskRole;
  readonly index: number;
  readonly server: string;
}

export interface ServerSnapshot {
  readonly name: string;
  /** Total allocatable resources. */
  readonly capacity: Resources;
  /**
   * Resources held by things this scheduler does not manage (other pods, system reserve).
   * What our jobs hold is NOT counted here: every round re-decides all of our jobs.
   */
  readonly reserved: Resources;
  /** Node labels (Kubernetes), matched by a job's {@link NodeConstraint}s. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Taints that keep tasks off unless tolerated (only NoSchedule / NoExecute matter). */
  readonly taints?: readonly Taint[];
}

export interface Taint {
  readonly key: string;
  readonly value?: string | undefined;
  readonly effect: string;
}

export interface Toleration {
  readonly key?: string | undefined;
  /** 'Equal' (default) or 'Exists'. */
  readonly operator?: string | undefined;
  readonly value?: string | undefined;
  /** Empty: tolerates every effect. */
  readonly effect?: string | undefined;
}

export interface NodeRequirement {
  readonly key: string;
  /** In, NotIn, Exists, DoesNotExist, Gt, Lt (Kubernetes node selector operators). */
  readonly operator: string;
  readonly values?: readonly string[] | undefined;
}

/** One required node-affinity term: every requirement holds (`matchFields` only on `metadata.name`). */
export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeRequirement[] | undefined;
  readonly matchFields?: readonly NodeRequirement[] | undefined;
}

/**
 * Where a task may run, with Kubernetes semantics: every `nodeSelector` label equal, at least one
 * of `terms` (required node affinity) matching when given, every NoSchedule/NoExecute taint
 * tolerated. What a pod template says, so that a pinned pod never lands where it cannot be bound.
 */
export interface NodeConstraint {
  readonly nodeSelector?: Readonly<Record<string, string>> | undefined;
  readonly terms?: readonly NodeSelectorTerm[] | undefined;
  readonly tolerations?: readonly Toleration[] | undefined;
}

/** Per role, constraints that must all admit a server (a PS also carries its job's scheduler pod's). */
export interface RoleConstraints {
  readonly ps?: readonly NodeConstraint[] | undefined;
  readonly worker?: readonly NodeConstraint[] | undefined;
}

/** The remaining work of a job, in steps, with an interval when estimated online. */
export interface RemainingWork {
  readonly steps: number;
  readonly lower: number;
  readonly upper: number;
}

export interface JobShape {
  readonly ps: number;
  readonly workers: number;
}

/** A period during which a job held one shape, in seconds on the `now` clock; `to` null while open. */
export interface RunSpan {
  readonly shape: JobShape;
  readonly from: number;
  readonly to: number | null;
}

export interface JobSnapshot {
  /** `namespace/name`, unique in the cluster. */
  readonly id: string;
  readonly mode: TrainingMode;
  /** Per-task demand of one parameter server and of one worker. */
  readonly psDemand: Resources;
  readonly workerDemand: Resources;
  readonly minPs: number;
  readonly maxPs: number;
  readonly minWorkers: number;
  readonly maxWorkers: number;
  /** Seconds (same clock as `now`) when the job was submitted. */
  readonly arrivalTime: number;
  /** The current shape and placement; null when the job holds nothing yet. */
  readonly current: { readonly shape: JobShape; readonly placement: readonly TaskPlacement[] } | null;
  readonly remaining: RemainingWork;
  readonly speed: SpeedModel;
  /** Latest observed step time per worker index (seconds), for straggler detection. */
  readonly workerStepTimes?: Readonly<Record<number, number>>;
  /**
   * Workers that still run but whose telemetry is gone (their sidecar's Last Will said `lost`):
   * replaced like stragglers, since nothing says they make progress.
   */
  readonly lostWorkers?: readonly number[];
  /** Optional weight on the job's gain (paper: 0.95 for new jobs; default 1). */
  readonly priority?: number;
  /** Servers each role may use (absent: any server); see `core/eligibility.ts`. */
  readonly constraints?: RoleConstraints | undefined;
  /**
   * The periods the job has run so far, oldest first (the runtime's shape history). What service
   * a job attained (GPU-seconds, for Tiresias's 2D-LAS) and how long it waited since are derived
   * from it, so a policy that needs them stays stateless. Absent: the job never ran.
   */
  readonly runs?: readonly RunSpan[] | undefined;
}

export interface PolicyInput {
  /** Seconds on the caller's clock. */
  readonly now: number;
  readonly servers: readonly ServerSnapshot[];
  readonly jobs: readonly JobSnapshot[];
  /** Seconds a checkpoint → restart costs a running job (resize cost). */
  readonly restartCostSec: number;
}

export type JobDecision =
  | {
      readonly jobId: string;
      readonly action: 'run';
      readonly shape: JobShape;
      readonly placement: readonly TaskPlacement[];
      /** Worker indexes the policy asks to replace (stragglers). */
      readonly replaceWorkers: readonly number[];
    }
  | { readonly jobId: string; readonly action: 'wait'; readonly reason: string };

export interface Decision {
  readonly jobs: readonly JobDecision[];
}

export interface Policy {
  readonly name: string;
  readonly description: string;
  /**
   * False for a policy that never reads a job's speed model beyond the speed observed at the shape
   * it runs (DRF, FIFO, SRTF at a fixed shape): the runtime then skips the pre-run, which exists
   * only to seed that model. Default true.
   */
  readonly needsSpeedModel?: boolean;
  /**
   * How this policy's jobs assign parameter blocks to their PS (paper §5.3): 'paa' (Optimus)
   * or MXNet's default (omitted). A backend that models PS load (`sim/parameter-blocks.ts`)
   * reads it; the decision itself does not depend on it.
   */
  readonly parameterAssignment?: 'paa' | 'mxnet-default';
  decide(input: PolicyInput): Decision;
}
