/**
 * The Kubernetes executor: the only place that changes what runs in the cluster. Each plan action
 * becomes a checkpoint → restart rollout (see `rollout.ts`). Jobs are handled in parallel, the
 * actions of one job in plan order; one failing action never stops the rest of the plan.
 */
import type { Plan, PlanAction } from '../../planning/types';

export interface ExecutionResult {
  readonly applied: readonly PlanAction[];
  readonly failed: readonly { readonly action: PlanAction; readonly error: string }[];
}

export interface ExecuteOptions {
  /** Aborted when the caller gives up waiting: the executor stops at its next step. */
  readonly signal?: AbortSignal;
  /** The target generation the pods the plan starts are labelled with (ADR 0035). */
  readonly generation?: number;
}

/** Carries a whole plan out (the executor before ADR 0035; see `plan-steps.ts`). */
export interface PlanExecutor {
  execute(plan: Plan, options?: ExecuteOptions): Promise<ExecutionResult>;
}
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import { CONDITION, setCondition } from '../api/conditions';
import type { JobEvent, JobEvents } from '../status/events';
import { EVENT_REASON, NO_EVENTS, shapeText } from '../status/events';
import type { JobApi } from '../api/job-api';
import { JobNotFoundError } from '../api/job-api';
import { isFinished } from '../observe/job-source';
import { runningSetOf } from '../observe/observe';
import type { JobPods, StartOutcome } from './job-pods';
import type { OptimusJob, OptimusJobSpec } from '../api/optimus-job';
import { gracePeriodOf, parseSpec } from '../api/optimus-job';
import { podName, splitJobId } from '../api/names';
import { buildTaskPod } from './pod-builder';
import type { Rollouts } from './rollout';
import type { RolloutTimings } from './rollout';
import { RolloutError } from './rollout';

export interface KubernetesExecutorDeps {
  readonly jobs: JobApi;
  readonly pods: JobPods;
  readonly rollouts: Rollouts;
  readonly timings: RolloutTimings;
  readonly now: () => number;
  /** Best-effort Kubernetes Events (never awaited). */
  readonly events?: JobEvents;
}

/** `n1, n2` (distinct servers, in placement order). */
const serversOf = (placement: readonly TaskPlacement[]): string =>
  [...new Set(placement.map((p) => p.server))].join(', ') || 'no server';

/** The event of a set that runs: a resize when a previous shape ran, else a (re)start. */
function runningEvent(
  shape: JobShape,
  placement: readonly TaskPlacement[],
  previous: JobShape | null,
  restarted: boolean,
): JobEvent {
  return previous
    ? {
        type: 'Normal',
        reason: EVENT_REASON.Resized,
        action: 'Resize',
        note: `${shapeText(previous)} → ${shapeText(shape)}`,
      }
    : {
        type: 'Normal',
        reason: EVENT_REASON.Started,
        action: 'Start',
        note: `${restarted ? 'resumed' : 'started'} with ${shapeText(shape)} on ${serversOf(placement)}`,
      };
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class KubernetesExecutor implements PlanExecutor {
  /** Jobs with an action in progress, and how many (plans of one job may overlap after an abort). */
  private readonly inProgress = new Map<string, number>();

  constructor(private readonly d: KubernetesExecutorDeps) {}

  /** True while an action of the job is being carried out (its pods are in transition). */
  rollingOut(jobId: string): boolean {
    return this.inProgress.has(jobId);
  }

  private emit(job: OptimusJob, e: JobEvent): void {
    (this.d.events ?? NO_EVENTS).emit(job, e);
  }

  /**
   * Applies the plan. An abort (`options.signal`) stops every job's rollout at its next step: the
   * action in progress and those not begun are reported as failed, and what was left is whatever
   * the next observation shows.
   */
  async execute(plan: Plan, options: ExecuteOptions = {}): Promise<ExecutionResult> {
    const { signal, generation } = options;
    const byJob = new Map<string, PlanAction[]>();
    for (const a of plan.actions) byJob.set(a.jobId, [...(byJob.get(a.jobId) ?? []), a]);
    const errors = new Map<PlanAction, string>();
    await Promise.all(
      [...byJob.entries()].map(async ([jobId, actions]) => {
        this.inProgress.set(jobId, (this.inProgress.get(jobId) ?? 0) + 1);
        try {
          for (const a of actions) {
            try {
              signal?.throwIfAborted();
              await (a.kind === 'finish' ? this.finish(a, signal) : this.apply(a, signal, generation));
            } catch (err) {
              errors.set(a, messageOf(err));
            }
          }
        } finally {
          const left = (this.inProgress.get(jobId) ?? 1) - 1;
          if (left > 0) this.inProgress.set(jobId, left);
          else this.inProgress.delete(jobId);
        }
      }),
    );
    return {
      applied: plan.actions.filter((a) => !errors.has(a)),
      failed: plan.actions
        .filter((a) => errors.has(a))
        .map((action) => ({ action, error: errors.get(action) ?? '' })),
    };
  }

  private async load(jobId: string): Promise<{ job: OptimusJob; spec: OptimusJobSpec }> {
    const id = splitJobId(jobId);
    if (!id) throw new RolloutError(`job id "${jobId}" is not namespace/name`);
    const job = await this.d.jobs.get(id.namespace, id.name);
    const parsed = parseSpec(job.spec);
    if (!parsed.ok) {
      const now = new Date(this.d.now()).toISOString();
      await this.d.jobs.updateStatus(id.namespace, id.name, (j) => ({
        conditions: setCondition(
          j.status?.conditions,
          { type: CONDITION.Invalid, status: 'True', reason: 'InvalidSpec', message: parsed.error },
          now,
        ),
      }));
      this.emit(job, {
        type: 'Warning',
        reason: EVENT_REASON.Rejected,
        action: 'Validate',
        note: parsed.error,
      });
      throw new RolloutError(`OptimusJob ${jobId} has an invalid spec: ${parsed.error}`);
    }
    return { job, spec: parsed.spec };
  }

  private async apply(
    a: Exclude<PlanAction, { kind: 'finish' }>,
    signal?: AbortSignal,
    generation?: number,
  ): Promise<void> {
    const { job, spec } = await this.load(a.jobId);
    // The status is the record that a job is over: nothing starts it again, whatever asks.
    if (isFinished(job) && a.kind !== 'suspend')
      throw new RolloutError(`OptimusJob ${a.jobId} has finished (${job.status?.phase})`);
    switch (a.kind) {
      case 'start':
        // Leftovers (a controller that died mid-rollout) are stopped first: one set at a time.
        await this.d.rollouts.stopAll(job, spec, signal);
        return this.startSet(
          { job, spec, shape: a.shape, placement: a.placement, signal, generation },
          {
            restarted: job.status?.phase === 'Suspended',
            previous: null,
          },
        );
      case 'resize': {
        // What runs before the stop is what a failed rollout rolls back to.
        const previous = runningSetOf(this.d.pods.list(job.metadata.namespace, job.metadata.name));
        await this.d.rollouts.stopAll(job, spec, signal);
        return this.startSet(
          { job, spec, shape: a.shape, placement: a.placement, signal, generation },
          {
            restarted: true,
            previous,
          },
        );
      }
      case 'suspend':
        await this.d.rollouts.stopAll(job, spec, signal);
        if (isFinished(job)) return;
        await this.d.rollouts.suspended(job, 'Suspended', a.reason);
        this.emit(job, { type: 'Normal', reason: EVENT_REASON.Suspended, action: 'Suspend', note: a.reason });
        return;
      case 'replace-worker':
        return this.replaceWorker(job, spec, { index: a.index, server: a.server, generation }, signal);
    }
  }

  /**
   * The job is over: its status says so first (a controller that dies right after neither starts
   * it again nor strands it), then its pods go — with the checkpoint grace when the runtime ends a
   * job that still trains, at once when its program already exited. Idempotent: a repeat keeps
   * the first completion time and deletes whatever is left. A job already deleted has nothing left
   * to record (its pods go with it).
   */
  private async finish(a: Extract<PlanAction, { kind: 'finish' }>, signal?: AbortSignal): Promise<void> {
    const id = splitJobId(a.jobId);
    if (!id) throw new RolloutError(`job id "${a.jobId}" is not namespace/name`);
    let job: OptimusJob;
    try {
      job = await this.d.jobs.get(id.namespace, id.name);
    } catch (err) {
      if (err instanceof JobNotFoundError) return;
      throw err;
    }
    await this.d.rollouts.finished(job, { outcome: a.outcome, reason: a.reason, message: a.message });
    signal?.throwIfAborted();
    const names = this.d.pods.list(id.namespace, id.name).map((p) => p.metadata?.name ?? '');
    if (names.length === 0) return;
    const parsed = parseSpec(job.spec);
    const grace = a.checkpoint && parsed.ok ? gracePeriodOf(parsed.spec) : 0;
    await this.d.rollouts.stopPods(job, names, {
      grace,
      checkpoint: a.checkpoint,
      ...(signal && { signal }),
    });
  }

  /**
   * Launches a set; on failure rolls back to `previous` when there is one (unless the rollout was
   * aborted: it stops there), else records that the job holds nothing.
   */
  private async startSet(
    set: {
      job: OptimusJob;
      spec: OptimusJobSpec;
      shape: JobShape;
      placement: readonly TaskPlacement[];
      signal: AbortSignal | undefined;
      generation: number | undefined;
    },
    o: { restarted: boolean; previous: { shape: JobShape; placement: readonly TaskPlacement[] } | null },
  ): Promise<void> {
    const { job, spec, shape, placement, signal, generation } = set;
    const { restarted, previous } = o;
    const outcome = await this.d.rollouts.launch(job, spec, shape, placement, signal, generation);
    if (outcome.ok) {
      await this.d.rollouts.running(job, shape, placement, restarted);
      await this.d.rollouts.rolloutSucceeded(job);
      this.emit(job, runningEvent(shape, placement, previous?.shape ?? null, restarted));
      return;
    }
    const failure = `rollout to ${shapeText(shape)} failed (${outcome.reason}: ${outcome.message})`;
    const back =
      previous && !signal?.aborted
        ? await this.d.rollouts
            .launch(job, spec, previous.shape, previous.placement, signal)
            .catch((err: unknown): StartOutcome => ({
              ok: false,
              reason: 'Aborted',
              message: messageOf(err),
            }))
        : null;
    if (previous && back?.ok) {
      await this.d.rollouts.running(job, previous.shape, previous.placement, restarted);
      await this.d.rollouts.rolloutFailed(job, outcome);
      this.emit(job, {
        type: 'Warning',
        reason: EVENT_REASON.RolledBack,
        action: 'Rollback',
        note: `${failure}; rolled back to ${shapeText(previous.shape)}`,
      });
      throw new RolloutError(
        `rollout of ${shape.ps} ps/${shape.workers} workers failed (${outcome.reason}: ${outcome.message}); rolled back`,
      );
    }
    await this.d.rollouts.suspended(job, 'RolloutFailed', outcome.message, outcome);
    this.emit(job, {
      type: 'Warning',
      reason: EVENT_REASON.RolloutFailed,
      action: previous ? 'Rollback' : 'Start',
      note: `${failure}; the job holds no pods until resources free up`,
    });
    throw new RolloutError(`rollout failed (${outcome.reason}: ${outcome.message}); the job holds nothing`);
  }

  /** A straggler: stop worker `index`, start one new worker on `server` (same shape, same env). */
  private async replaceWorker(
    job: OptimusJob,
    spec: OptimusJobSpec,
    to: { index: number; server: string; generation: number | undefined },
    signal?: AbortSignal,
  ): Promise<void> {
    const { index, server, generation } = to;
    const running = runningSetOf(this.d.pods.list(job.metadata.namespace, job.metadata.name));
    const shape = running?.shape;
    const placement = running?.placement ?? [];
    const old = placement.find((p) => p.role === 'worker' && p.index === index);
    if (!shape || !old)
      throw new RolloutError(
        `worker ${index} of ${job.metadata.namespace}/${job.metadata.name} is not running`,
      );
    const ns = job.metadata.namespace;
    const name = podName(job.metadata.name, 'worker', index);
    const { startTimeoutMs: timeoutMs, unschedulableGraceMs, stopSlackMs } = this.d.timings;
    const grace = gracePeriodOf(spec);
    await this.d.pods.delete(ns, [name], grace);
    await this.d.pods.waitGone(ns, job.metadata.name, [name], grace * 1000 + stopSlackMs, signal);
    let firstFailure = '';
    for (const target of [server, old.server]) {
      // An abort stops here: the job runs a worker short, which the next round observes and re-plans.
      signal?.throwIfAborted();
      const outcome = await this.d.pods
        .create([
          buildTaskPod(
            { job, spec, shape, placement, ...(generation === undefined ? {} : { generation }) },
            'worker',
            index,
            target,
          ),
        ])
        .then((created) => this.d.pods.waitRunning(created, { timeoutMs, unschedulableGraceMs, signal }))
        // A rejected create (a conflict, a quota) is a failed start like any other: never a job
        // left one worker short without a condition.
        .catch((err: unknown): StartOutcome => ({
          ok: false,
          reason: 'CreateFailed',
          message: messageOf(err),
        }));
      if (outcome.ok) {
        await this.d.rollouts.running(
          job,
          shape,
          placement.map((p) => (p === old ? { ...p, server: target } : p)),
          false,
        );
        this.emit(job, {
          type: target === server ? 'Normal' : 'Warning',
          reason: EVENT_REASON.WorkerReplaced,
          action: 'ReplaceWorker',
          note:
            target === server
              ? `worker ${index} moved from ${old.server} to ${server}`
              : `worker ${index} could not move to ${server} (${firstFailure}); restarted on ${old.server}`,
        });
        if (target !== server)
          throw new RolloutError(
            `replacement worker on ${server} failed (${firstFailure}); kept it on ${old.server}`,
          );
        return;
      }
      firstFailure ||= `${outcome.reason}: ${outcome.message}`;
      await this.d.pods.delete(ns, [name], 0);
      await this.d.pods.waitGone(ns, job.metadata.name, [name], stopSlackMs);
      signal?.throwIfAborted();
      if (target === old.server) {
        // Neither node takes the worker: stop the whole job rather than leave it short of a worker.
        await this.d.rollouts.stopAll(job, spec);
        await this.d.rollouts.suspended(job, 'RolloutFailed', outcome.message, outcome);
        this.emit(job, {
          type: 'Warning',
          reason: EVENT_REASON.RolloutFailed,
          action: 'ReplaceWorker',
          note: `worker ${index} could not be replaced (${firstFailure}); the job was stopped`,
        });
        throw new RolloutError(
          `worker ${index} could not be replaced (${firstFailure}); the job was stopped`,
        );
      }
    }
  }
}
