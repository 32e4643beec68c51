/**
 * The port every backend implements (local processes, Kubernetes). The runtime is the
 * same for all of them; they differ only here, at the edge.
 */
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import type { JobEnd } from './job-end';
import type { JobRecord } from './job-record';
import type { CurrentJob } from './core';
import type { ApiPhase } from './rollout/in-flight';
import type { JobSpec } from './job-spec';
import type { Observation, ObservedJob } from './observed';
import type { RolloutStep } from './rollout/next-step';
import type { JobTarget } from './rollout/target';

export type { JobEnd, JobOutcome } from './job-end';
export type { Observation, ObservedJob, ObservedTask, TaskState } from './observed';

export interface BackendEvents {
  /**
   * Something the backend observes changed (a task started, exited or vanished; a job's resource
   * changed). Only a nudge: the runtime reads the state itself in its next round (level-triggered).
   */
  changed(): void;
}

/** One rollout step of one job, handed to the backend's executor (ADR 0035). */
export interface StepRequest {
  readonly jobId: string;
  readonly spec: JobSpec;
  /** The target the step moves toward: what is started carries its generation. */
  readonly target: JobTarget;
  /** What was observed of the job when the step was chosen. */
  readonly observed: ObservedJob | undefined;
  /** The step (`rollout/next-step.ts`): record the job's end, stop these tasks, or start these. */
  readonly step: RolloutStep;
}

/**
 * How a step went. `done`: carried out (or already so: steps are idempotent), look again after
 * `requeueAfterMs` (the backend also says when anything changes). `failed`: the step cannot be
 * carried out (a refused create, a job that is gone); the runtime gives the rollout up.
 */
export type StepOutcome =
  | { readonly kind: 'done'; readonly requeueAfterMs?: number }
  | { readonly kind: 'failed'; readonly error: string };

/**
 * The one writer to a backend's cluster. `step` carries out one step toward a job's target on the
 * cluster, at once (it never waits for the cluster to get there: the runtime looks again), and does
 * the same or nothing when called again with the same request. It never throws: a failure is an
 * outcome.
 */
export interface Executor {
  step(request: StepRequest): Promise<StepOutcome>;
}

export interface Backend {
  /** The one writer to the cluster. */
  readonly executor: Executor;
  /** What runs now, read from the backend's own view (informer caches, process table, simulation). */
  observe(): Promise<Observation>;
  /**
   * Makes a job known to the backend (local: prepares its directory). Nothing runs yet.
   * `fresh`: a new submission, not a job resumed from the store — whatever the backend still holds
   * under this name (a checkpoint, logs) is an earlier job's and must not be resumed.
   */
  admit(spec: JobSpec, o?: { readonly fresh: boolean }): Promise<void>;
  /** Stops everything of a job and forgets it. */
  remove(jobId: string): Promise<void>;
  /** Wires the backend's change notifications to the runtime. Called once before anything runs. */
  attach(events: BackendEvents): void;
  /**
   * Optional: what the runtime knows of every job after a round (Kubernetes composes the job's
   * status from it). Called once per round; must not block the round (queue and write
   * asynchronously).
   */
  reportJobs?(reports: readonly JobReport[]): void;
  close(): Promise<void>;
}

/** One job as the runtime knows it after a round (see {@link Backend.reportJobs}). */
export interface JobReport {
  readonly jobId: string;
  /** The record's phase; `resizing` while a rollout of the job is in flight. */
  readonly phase: ApiPhase;
  /** What runs, as observed (null: nothing does). */
  readonly current: CurrentJob | null;
  /** The job's target (what it should run), generation-stamped; null before its first decision. */
  readonly target: JobTarget | null;
  readonly restarts: number;
  /** How the job ended; null while it is not over. */
  readonly end: JobEnd | null;
  /** Why it waits, when it does. */
  readonly reason: string | null;
  /** Why it is not scheduled as it should be (a rollout given up, a refit that failed). */
  readonly degraded: JobRecord['degraded'];
  /** The API's restart-cost view (the last rollout's phases and the median). */
  readonly restartCost: Readonly<Record<string, unknown>>;
  /** Fraction of the predicted total steps done, 0..1; null before anything is known. */
  readonly progress: number | null;
  /** Wall-clock ms of the predicted completion; null when it cannot be predicted. */
  readonly predictedCompletionMs: number | null;
  /** A bounded summary of the fitted models (the API's `models` view), or null before a fit. */
  readonly models: Readonly<Record<string, unknown>> | null;
}

/** A persisted observation: one accepted metrics record of one task. */
export interface StoredRecord {
  readonly task: TaskId;
  readonly record: MetricsRecord;
  /** The job's {@link JobRecord.incarnation} when the record was accepted (absent in old logs). */
  readonly incarnation?: string;
}

/** The runtime's documents: jobs and decisions. Observations go to an append-only log. */
export interface RuntimeDocument {
  readonly v: 1;
  readonly originMs: number;
  readonly decisions: number;
  readonly jobs: readonly JobRecord[];
}

/** Where observations and decisions survive a controller restart. */
export interface StateStore {
  load(): Promise<{ doc: RuntimeDocument | null; records: StoredRecord[] }>;
  /** Appends one accepted record durably before the runtime acts on it. */
  appendRecord(r: StoredRecord): void;
  /**
   * Optional: resolves true once every record appended before the call survives a crash of the
   * controller (and of its host, where the store can promise that); false when it cannot say so yet.
   * The controller's end-to-end acknowledgement (watermarks) waits for it (ADR 0012). Absent: the
   * appends themselves are durable.
   */
  durable?(): Promise<boolean>;
  saveDocument(doc: RuntimeDocument): Promise<void>;
  /**
   * Optional: deletes the records of one incarnation of a removed job (and those without an
   * incarnation). Called only after a document without the job was saved. It reclaims space;
   * correctness does not depend on it, since the runtime replays a job's records only when they
   * carry its own incarnation, so a crash before (or during) the purge resurrects nothing.
   */
  purgeJob?(jobId: string, incarnation: string | undefined): void;
  close(): Promise<void>;
}
