/**
 * Completion, pure: how a job's end is read from the cluster and how it is recorded there. The
 * program has ended when all its workers exited 0 or one failed (its pods say so); the job is
 * over for good once its status is terminal. The `finish` action of the executor records the end
 * first (this status) and only then deletes the pods, so a controller that dies in between finds
 * a finished job with pods left to delete — never a job without pods whose status says it runs.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { JobEnd } from '../../runtime/backend';
import { CONDITION, setCondition } from '../api/conditions';
import type { JobEvent } from '../status/events';
import { EVENT_REASON } from '../status/events';
import type { StatusChange } from '../api/job-api';
import type { OptimusJob } from '../api/optimus-job';
import { isFinished } from './job-source';
import { LABEL_ROLE } from '../api/names';

export type CompletionVerdict = 'running' | 'succeeded' | 'failed';

/**
 * Pod-level reasons of a `Failed` pod that are the cluster's doing, not the program's: evicted,
 * preempted, rejected by its kubelet (`OutOfcpu`…), its node lost or shut down. Such a task failed,
 * but the job's program did not fail: the job is re-planned (and resumes from its checkpoint).
 */
const DISRUPTION_REASONS = new Set([
  'Evicted',
  'Preempting',
  'NodeLost',
  'NodeAffinity',
  'NodeShutdown',
  'Shutdown',
  'Terminated',
  'UnexpectedAdmissionError',
]);

/** True when a failed pod was disrupted by the cluster (Kubernetes' `DisruptionTarget` semantics). */
export function isDisruption(pod: V1Pod): boolean {
  const reason = pod.status?.reason ?? '';
  if (DISRUPTION_REASONS.has(reason) || reason.startsWith('OutOf')) return true;
  return (pod.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True');
}

/** The verdict from a job's pods: its workers' exits (a disrupted worker is not the program's end). */
export function verdictFrom(pods: readonly V1Pod[]): { verdict: CompletionVerdict; message: string } {
  const workers = pods.filter(
    (p) => p.metadata?.labels?.[LABEL_ROLE] === 'worker' && !p.metadata.deletionTimestamp,
  );
  const failed = workers.find((p) => p.status?.phase === 'Failed' && !isDisruption(p));
  if (failed)
    return {
      verdict: 'failed',
      message: `worker pod ${failed.metadata?.name} failed: ${failed.status?.reason ?? failed.status?.message ?? exitText(failed)}`,
    };
  if (workers.length > 0 && workers.every((p) => p.status?.phase === 'Succeeded'))
    return { verdict: 'succeeded', message: `all ${workers.length} workers finished` };
  return { verdict: 'running', message: '' };
}

/** `exit code 1` of the first container that terminated with a non-zero code. */
function exitText(pod: V1Pod): string {
  const code = (pod.status?.containerStatuses ?? [])
    .map((c) => c.state?.terminated?.exitCode)
    .find((c) => c !== undefined && c !== 0);
  return code === undefined ? 'non-zero exit' : `exit code ${code}`;
}

/** The job's program ended on its own, read from its pods (see {@link verdictFrom}). */
export function exitedOf(pods: readonly V1Pod[]): JobEnd | null {
  const { verdict, message } = verdictFrom(pods);
  if (verdict === 'running') return null;
  return verdict === 'succeeded'
    ? { outcome: 'succeeded', reason: 'WorkersSucceeded', message }
    : { outcome: 'failed', reason: 'WorkerFailed', message };
}

/** The end a terminal status records (its `Complete` condition says why), or null. */
export function finishedOf(job: OptimusJob): JobEnd | null {
  if (!isFinished(job)) return null;
  const conditions = job.status?.conditions ?? [];
  const why =
    conditions.find((c) => c.type === CONDITION.Complete) ??
    conditions.find((c) => c.type === CONDITION.Invalid && c.status === 'True');
  return {
    outcome: job.status?.phase === 'Succeeded' ? 'succeeded' : 'failed',
    reason: why?.reason ?? job.status?.phase ?? 'Completed',
    message: why?.message ?? '',
  };
}

/** Seconds from the job's creation to `nowMs`. */
export function jctSecondsOf(job: OptimusJob, nowMs: number): number {
  const created = job.metadata.creationTimestamp ? new Date(job.metadata.creationTimestamp).getTime() : nowMs;
  return Math.max(0, (nowMs - created) / 1000);
}

/** The status of a job that is over: phase, completion time, JCT, `Complete` and `Running` conditions. */
export function terminalStatus(job: OptimusJob, end: JobEnd, nowMs: number): StatusChange {
  const nowIso = new Date(nowMs).toISOString();
  const ok = end.outcome === 'succeeded';
  const { reason, message } = end;
  return {
    phase: ok ? 'Succeeded' : 'Failed',
    completionTime: nowIso,
    jctSeconds: jctSecondsOf(job, nowMs),
    conditions: setCondition(
      setCondition(
        job.status?.conditions,
        { type: CONDITION.Complete, status: ok ? 'True' : 'False', reason, message },
        nowIso,
      ),
      { type: CONDITION.Running, status: 'False', reason, message },
      nowIso,
    ),
  };
}

/** The Event of a job that is over. */
export function completionEvent(end: JobEnd, jctSeconds: number): JobEvent {
  const ok = end.outcome === 'succeeded';
  return {
    type: ok ? 'Normal' : 'Warning',
    reason: ok ? EVENT_REASON.Completed : EVENT_REASON.Failed,
    action: 'Complete',
    note: `${end.reason}: ${end.message}; JCT ${Math.round(jctSeconds)} s`,
  };
}
