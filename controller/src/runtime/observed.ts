/** What a backend observes: the tasks of each job and what others hold on each server. */
import type { ServerSnapshot, TaskRole } from '../scheduling/types';
import type { JobEnd } from './job-end';

/** The state of one task as the backend observes it. */
export type TaskState = 'pending' | 'running' | 'stopping' | 'succeeded' | 'failed';

export interface ObservedTask {
  readonly role: TaskRole;
  readonly index: number;
  readonly server: string;
  readonly state: TaskState;
  /**
   * The target generation the task was started for (a pod label, a process's environment);
   * absent when the backend cannot say (a pod an older controller started): it then matches any.
   */
  readonly generation?: number;
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
