/**
 * The port every backend implements (local processes, Kubernetes). The runtime is the
 * same for all of them; they differ only here, at the edge.
 */
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import type { Executor } from '../planning/types';
import type { ServerSnapshot, TaskRole } from '../scheduling/types';
import type { JobEnd } from './job-end';
import type { JobPhase, JobRecord } from './job-record';
import type { JobSpec } from './job-spec';

export type { JobEnd, JobOutcome } from './job-end';

export interface BackendEvents {
  /**
   * Something the backend observes changed (a task started, exited or vanished; a job's resource
   * changed). Only a nudge: the runtime reads the state itself in its next round (level-triggered).
   */
  changed(): void;
}

/** The state of one task as the backend observes it. */
export type TaskState = 'pending' | 'running' | 'stopping' | 'succeeded' | 'failed';

export interface ObservedTask {
  readonly role: TaskRole;
  readonly index: number;
  readonly server: string;
  readonly state: TaskState;
}

/** What the backend observes of one job: never what the runtime remembers. */
export interface ObservedJob {
  readonly tasks: readonly ObservedTask[];
  /** The job's training program ended on its own (all workers exited 0, or one failed for good). */
  readonly exited: JobEnd | null;
  /**
   * The backend holds the job as finished (Kubernetes: a terminal status), whatever still runs: a
   * controller that restarts adopts it rather than starting the job again.
   */
  readonly finished: JobEnd | null;
}

/** One observation of the whole cluster, the start of every round. */
export interface Observation {
  /** The servers and what others (not our jobs) hold on them. */
  readonly servers: readonly ServerSnapshot[];
  /** Every admitted job the backend knows; a job absent here runs nothing. */
  readonly jobs: ReadonlyMap<string, ObservedJob>;
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
   * Optional: what the runtime knows of every job after a round (Kubernetes shows it in the job's
   * status). Called once per round; must not block the round (queue and write asynchronously).
   */
  reportJobs?(reports: readonly JobReport[]): void;
  close(): Promise<void>;
}

/** One job's progress and predictions after a round (see {@link Backend.reportJobs}). */
export interface JobReport {
  readonly jobId: string;
  readonly phase: JobPhase;
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
