/**
 * Completion: a job is done when all its workers exit 0, or when the runtime says its convergence
 * rule is met. Its pods are removed (the Service and pods also go with the job through owner
 * references), and the status records completion time and JCT.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { CONDITION, setCondition } from './conditions';
import type { JobEvents } from './events';
import { EVENT_REASON, NO_EVENTS } from './events';
import type { JobApi } from './job-api';
import type { JobPods } from './job-pods';
import type { OptimusJob } from './optimus-job';
import { isFinished } from './job-source';
import { LABEL_ROLE, splitJobId } from './names';

export type CompletionVerdict = 'running' | 'succeeded' | 'failed';

/** Pure: the verdict from a job's pods. */
export function verdictFrom(pods: readonly V1Pod[]): { verdict: CompletionVerdict; message: string } {
  const workers = pods.filter(
    (p) => p.metadata?.labels?.[LABEL_ROLE] === 'worker' && !p.metadata.deletionTimestamp,
  );
  const failed = workers.find((p) => p.status?.phase === 'Failed');
  if (failed)
    return {
      verdict: 'failed',
      message: `worker pod ${failed.metadata?.name} failed: ${failed.status?.reason ?? failed.status?.message ?? 'non-zero exit'}`,
    };
  if (workers.length > 0 && workers.every((p) => p.status?.phase === 'Succeeded'))
    return { verdict: 'succeeded', message: `all ${workers.length} workers finished` };
  return { verdict: 'running', message: '' };
}

export class JobCompletion {
  constructor(private readonly d: { jobs: JobApi; pods: JobPods; now: () => number; events?: JobEvents }) {}

  /** Looks at the job's pods and finishes the job when its workers are done. */
  async check(job: OptimusJob): Promise<CompletionVerdict> {
    if (isFinished(job) || job.status?.phase !== 'Running')
      return isFinished(job) ? (job.status?.phase === 'Failed' ? 'failed' : 'succeeded') : 'running';
    const { verdict, message } = verdictFrom(
      await this.d.pods.list(job.metadata.namespace, job.metadata.name),
    );
    if (verdict !== 'running')
      await this.finish(job, verdict, verdict === 'succeeded' ? 'WorkersSucceeded' : 'WorkerFailed', message);
    return verdict;
  }

  /** Finishes `jobId` because its convergence rule is met (called by the runtime). */
  async converged(jobId: string, message: string): Promise<void> {
    const id = splitJobId(jobId);
    if (!id) throw new Error(`job id "${jobId}" is not namespace/name`);
    await this.finish(await this.d.jobs.get(id.namespace, id.name), 'succeeded', 'Converged', message);
  }

  private async finish(
    job: OptimusJob,
    verdict: 'succeeded' | 'failed',
    reason: string,
    message: string,
  ): Promise<void> {
    const ns = job.metadata.namespace;
    const names = (await this.d.pods.list(ns, job.metadata.name)).map((p) => p.metadata?.name ?? '');
    // The model is final: no checkpoint needed, remove everything at once.
    await this.d.pods.delete(ns, names, 0);
    const nowMs = this.d.now();
    const created = job.metadata.creationTimestamp
      ? new Date(job.metadata.creationTimestamp).getTime()
      : nowMs;
    const nowIso = new Date(nowMs).toISOString();
    const jctSeconds = Math.max(0, (nowMs - created) / 1000);
    await this.d.jobs.updateStatus(ns, job.metadata.name, (j) => ({
      phase: verdict === 'succeeded' ? 'Succeeded' : 'Failed',
      completionTime: nowIso,
      jctSeconds,
      conditions: setCondition(
        setCondition(
          j.status?.conditions,
          { type: CONDITION.Complete, status: verdict === 'succeeded' ? 'True' : 'False', reason, message },
          nowIso,
        ),
        { type: CONDITION.Running, status: 'False', reason, message },
        nowIso,
      ),
    }));
    (this.d.events ?? NO_EVENTS).emit(job, {
      type: verdict === 'succeeded' ? 'Normal' : 'Warning',
      reason: verdict === 'succeeded' ? EVENT_REASON.Completed : EVENT_REASON.Failed,
      action: 'Complete',
      note: `${reason}: ${message}; JCT ${Math.round(jctSeconds)} s`,
    });
  }
}
