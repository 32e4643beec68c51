/**
 * Rollout of one job by checkpoint → restart, all-or-nothing: either every pod of the new set
 * runs, or none of it is left (the set is deleted, the previous shape is restored when possible,
 * and a `RolloutFailed` condition says why).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import type { KubeClients } from '../api/clients';
import { statusCodeOf } from '../api/clients';
import type { CheckpointSignal } from './checkpoint-signal';
import { CONDITION, setCondition } from '../api/conditions';
import type { JobEvents } from '../status/events';
import { EVENT_REASON, NO_EVENTS } from '../status/events';
import type { JobApi, StatusChange } from '../api/job-api';
import type { JobPods, StartOutcome } from './job-pods';
import type { OptimusJob, OptimusJobSpec } from '../api/optimus-job';
import { gracePeriodOf, jobIdOfResource, schedulerPortOf } from '../api/optimus-job';
import { buildHeadlessService, buildJobPods } from './pod-builder';
import type { JobEnd } from '../../runtime/backend';
import { completionEvent, jctSecondsOf, terminalStatus } from '../observe/completion';
import { isFinished } from '../observe/job-source';

export interface RolloutTimings {
  /** How long a new set may take to run before the rollout counts as failed. */
  readonly startTimeoutMs: number;
  /** How long a pod may stay unschedulable before the rollout counts as failed. */
  readonly unschedulableGraceMs: number;
  /** Extra time after the grace period for pods to disappear. */
  readonly stopSlackMs: number;
  /** Once the pods are gone, how long a checkpoint report may still be on its way (sidecar → broker). */
  readonly checkpointReportLagMs: number;
}

export interface RolloutDeps {
  readonly clients: KubeClients;
  readonly jobs: JobApi;
  readonly pods: JobPods;
  readonly timings: RolloutTimings;
  readonly now: () => number;
  readonly checkpoint?: CheckpointSignal;
  /** Best-effort Kubernetes Events (never awaited). */
  readonly events?: JobEvents;
}

export class RolloutError extends Error {}

const iso = (ms: number) => new Date(ms).toISOString();
const namesOf = (pods: readonly V1Pod[]) => pods.map((p) => p.metadata?.name ?? '');
/** Pod names end in `-<role>-<index>` (see `podName`). */
const isSchedulerPod = (name: string): boolean => /-scheduler-\d+$/.test(name);

export class Rollouts {
  constructor(private readonly d: RolloutDeps) {}

  private status(job: OptimusJob, change: (j: OptimusJob) => StatusChange): Promise<OptimusJob> {
    return this.d.jobs.updateStatus(job.metadata.namespace, job.metadata.name, change);
  }

  private async ensureService(job: OptimusJob, spec: OptimusJobSpec): Promise<void> {
    try {
      await this.d.clients.core.createNamespacedService({
        namespace: job.metadata.namespace,
        body: buildHeadlessService(job, schedulerPortOf(spec)),
      });
    } catch (err) {
      if (statusCodeOf(err) !== 409) throw err;
    }
  }

  /**
   * Creates the full set and waits for it; on failure deletes all of it again (no half job). An
   * abort while the set starts is a failure like any other: the set goes.
   */
  async launch(
    job: OptimusJob,
    spec: OptimusJobSpec,
    shape: JobShape,
    placement: readonly TaskPlacement[],
    signal?: AbortSignal,
    generation?: number,
  ): Promise<StartOutcome> {
    signal?.throwIfAborted();
    await this.ensureService(job, spec);
    const pods = buildJobPods({
      job,
      spec,
      shape,
      placement,
      ...(generation === undefined ? {} : { generation }),
    });
    const ns = job.metadata.namespace;
    let outcome: StartOutcome;
    try {
      const created = await this.d.pods.create(pods);
      const { startTimeoutMs: timeoutMs, unschedulableGraceMs } = this.d.timings;
      outcome = await this.d.pods.waitRunning(created, { timeoutMs, unschedulableGraceMs, signal });
    } catch (err) {
      outcome = {
        ok: false,
        reason: 'CreateFailed',
        message: err instanceof Error ? err.message : String(err),
      };
    }
    if (!outcome.ok) {
      // The set never ran: nothing to checkpoint, so it goes without a grace period.
      await this.d.pods.delete(ns, namesOf(pods), 0);
      await this.d.pods.waitGone(ns, job.metadata.name, namesOf(pods), this.d.timings.stopSlackMs);
    }
    return outcome;
  }

  /**
   * Asks every pod of the job to checkpoint and stop (SIGTERM, grace period from the spec), waits
   * for the checkpoint line (when a signal is wired) and for the pods to be gone.
   */
  async stopAll(job: OptimusJob, spec: OptimusJobSpec, signal?: AbortSignal): Promise<void> {
    const names = namesOf(this.d.pods.list(job.metadata.namespace, job.metadata.name));
    if (names.length === 0) return;
    signal?.throwIfAborted();
    // Never over a terminal phase: a finished job's leftovers are stopped without un-finishing it.
    await this.status(job, (j) => (isFinished(j) ? {} : { phase: 'Resizing' }));
    await this.stopPods(job, names, {
      grace: gracePeriodOf(spec),
      checkpoint: true,
      ...(signal && { signal }),
    });
  }

  /**
   * Deletes `names` with `grace` seconds and waits for them to be gone (the MXNet scheduler pod
   * first: a stop cut short never leaves it alone behind). With `checkpoint`, also waits for the
   * job's checkpoint line and records whether it came.
   */
  async stopPods(
    job: OptimusJob,
    names: readonly string[],
    o: { grace: number; checkpoint: boolean; signal?: AbortSignal },
  ): Promise<void> {
    const ns = job.metadata.namespace;
    const since = this.d.now();
    const ordered = [...names].sort((a, b) => Number(isSchedulerPod(b)) - Number(isSchedulerPod(a)));
    await this.d.pods.delete(ns, ordered, o.grace);
    const timeoutMs = o.grace * 1000 + this.d.timings.stopSlackMs;
    const checkpoint = o.checkpoint
      ? this.d.checkpoint?.waitForCheckpoint(jobIdOfResource(job), since, timeoutMs)
      : undefined;
    const gone = await this.d.pods.waitGone(ns, job.metadata.name, ordered, timeoutMs, o.signal);
    o.signal?.throwIfAborted();
    if (!gone)
      throw new RolloutError(
        `pods of ${jobIdOfResource(job)} still present ${Math.round(timeoutMs / 1000)} s after the stop request`,
      );
    const lag = new Promise<boolean>((resolve) =>
      setTimeout(() => resolve(false), this.d.timings.checkpointReportLagMs).unref(),
    );
    const checkpointed = checkpoint && (await Promise.race([checkpoint, lag]));
    if (checkpointed === undefined) return;
    await this.recordCheckpoint(job, checkpointed, o.grace);
  }

  private async recordCheckpoint(job: OptimusJob, checkpointed: boolean, grace: number): Promise<void> {
    (this.d.events ?? NO_EVENTS).emit(
      job,
      checkpointed
        ? {
            type: 'Normal',
            reason: EVENT_REASON.Checkpointed,
            action: 'Stop',
            note: 'the job logged a checkpoint before its pods stopped',
          }
        : {
            type: 'Warning',
            reason: EVENT_REASON.NoCheckpoint,
            action: 'Stop',
            note: `no checkpoint line within ${grace} s; the job resumes from its last checkpoint`,
          },
    );
    const now = iso(this.d.now());
    await this.status(job, (j) => ({
      conditions: setCondition(
        j.status?.conditions,
        checkpointed
          ? {
              type: CONDITION.Checkpointed,
              status: 'True',
              reason: 'CheckpointLine',
              message: 'the job logged a checkpoint before stopping',
            }
          : {
              type: CONDITION.Checkpointed,
              status: 'Unknown',
              reason: 'NoCheckpointLine',
              message: `no checkpoint line within ${grace} s; the job resumes from its last checkpoint`,
            },
        now,
      ),
    }));
  }

  /**
   * Records the job as over: its terminal status, then its Event. True when this call wrote it,
   * false when the status already was terminal (a repeated finish keeps the first completion time).
   */
  async finished(job: OptimusJob, end: JobEnd): Promise<boolean> {
    if (isFinished(job)) return false;
    let wrote = false;
    let jct = 0;
    await this.status(job, (j) => {
      wrote = !isFinished(j);
      if (!wrote) return {};
      const nowMs = this.d.now();
      jct = jctSecondsOf(j, nowMs);
      return terminalStatus(j, end, nowMs);
    });
    if (wrote) (this.d.events ?? NO_EVENTS).emit(job, completionEvent(end, jct));
    return wrote;
  }

  /** Records a running shape. */
  running(
    job: OptimusJob,
    shape: JobShape,
    placement: readonly TaskPlacement[],
    restarted: boolean,
  ): Promise<OptimusJob> {
    const now = iso(this.d.now());
    return this.status(job, (j) => ({
      phase: 'Running',
      shape,
      placement: [...placement],
      restarts: (j.status?.restarts ?? 0) + (restarted ? 1 : 0),
      startTime: j.status?.startTime ?? now,
      conditions: setCondition(
        j.status?.conditions,
        {
          type: CONDITION.Running,
          status: 'True',
          reason: 'AllPodsRunning',
          message: `${shape.ps} ps, ${shape.workers} workers`,
        },
        now,
      ),
    }));
  }

  /** Records that nothing of the job runs (suspended, or a failed rollout without a way back). */
  suspended(job: OptimusJob, reason: string, message: string, failed?: StartOutcome): Promise<OptimusJob> {
    const now = iso(this.d.now());
    return this.status(job, (j) => {
      let conditions = setCondition(
        j.status?.conditions,
        { type: CONDITION.Running, status: 'False', reason, message },
        now,
      );
      if (failed && !failed.ok)
        conditions = setCondition(
          conditions,
          { type: CONDITION.RolloutFailed, status: 'True', reason: failed.reason, message: failed.message },
          now,
        );
      return { phase: 'Suspended', shape: { ps: 0, workers: 0 }, placement: [], conditions };
    });
  }

  /** Marks the last rollout as failed while the job keeps (or regains) its previous shape. */
  rolloutFailed(job: OptimusJob, failed: StartOutcome & { ok: false }): Promise<OptimusJob> {
    const now = iso(this.d.now());
    return this.status(job, (j) => ({
      conditions: setCondition(
        j.status?.conditions,
        { type: CONDITION.RolloutFailed, status: 'True', reason: failed.reason, message: failed.message },
        now,
      ),
    }));
  }

  /** Clears a RolloutFailed condition after a successful rollout. */
  rolloutSucceeded(job: OptimusJob): Promise<OptimusJob> {
    const now = iso(this.d.now());
    return this.status(job, (j) =>
      j.status?.conditions?.some((c) => c.type === CONDITION.RolloutFailed && c.status === 'True')
        ? {
            conditions: setCondition(
              j.status.conditions,
              { type: CONDITION.RolloutFailed, status: 'False', reason: 'RolloutSucceeded' },
              now,
            ),
          }
        : {},
    );
  }
}
