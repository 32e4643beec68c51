/**
 * The runtime's backend port (`runtime/backend.ts`) on Kubernetes: jobs come from OptimusJobs,
 * the executor and cluster view from the Kubernetes backend, job completion from the pods.
 */
import type { Backend, BackendEvents, JobReport } from '../runtime/backend';
import type { CurrentJob } from '../runtime/core';
import type { JobSpec, JobSpecInput } from '../runtime/job-spec';
import { jobIdOf } from '../runtime/job-spec';
import type { ServerSnapshot } from '../scheduling/types';
import type { KubernetesBackend } from './index';
import type { JobEntry } from './job-source';
import { currentOf } from './job-source';
import type { Resources } from '../../../shared/src/units';
import { demandOf } from './optimus-job';
import { addResources } from './quantity';
import { ProgressPublisher } from './progress-publisher';

/**
 * An OptimusJob → the runtime's job spec input (validated by the runtime's own schema).
 *
 * The policy sees what the job's pods really request: every PS and worker pod also carries the
 * injected sidecar (`podOverhead`), and the job's one MXNet scheduler pod is counted on its PS
 * tasks (conservative by (p − 1) × its small request, but never leaves a pinned pod
 * unschedulable on a node the policy thought had room).
 */
export function toJobSpecInput(
  entry: Extract<JobEntry, { valid: true }>,
  podOverhead: Resources = {},
): JobSpecInput {
  const { job, spec } = entry;
  const base = demandOf(spec);
  const demand = {
    ps: addResources(addResources(base.ps, podOverhead), addResources(base.scheduler, podOverhead)),
    worker: addResources(base.worker, podOverhead),
  };
  return {
    namespace: job.metadata.namespace,
    name: job.metadata.name,
    mode: spec.mode,
    batchSize: spec.batchSize,
    stepsPerEpoch: spec.convergence.stepsPerEpoch,
    convergence: { threshold: spec.convergence.threshold, patience: spec.convergence.patience },
    ...(spec.convergence.maxEpochs !== undefined ? { maxEpochs: spec.convergence.maxEpochs } : {}),
    psDemand: demand.ps,
    workerDemand: demand.worker,
    minPs: spec.scaling.minPs,
    maxPs: spec.scaling.maxPs,
    minWorkers: spec.scaling.minWorkers,
    maxWorkers: spec.scaling.maxWorkers,
  };
}

export class KubernetesRuntimeBackend implements Backend {
  /** Writes the runtime's per-round reports into the job statuses (coalesced, on change only). */
  readonly progress: ProgressPublisher;
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly k: KubernetesBackend,
    private readonly o: { completionCheckMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.progress = new ProgressPublisher(k.status, { onError: (err) => o.onError?.(err) });
  }

  get executor() {
    return this.k.executor;
  }

  async servers(): Promise<ServerSnapshot[]> {
    return this.k.servers();
  }

  /** The job must exist as an OptimusJob: Kubernetes is the source of jobs. */
  async admit(spec: JobSpec): Promise<void> {
    const id = jobIdOf(spec);
    if (!this.k.jobs.list().some((e) => e.id === id)) throw new Error(`OptimusJob ${id} not found`);
  }

  /** Stops what runs of the job (its pods also go with the resource through owner references). */
  async remove(jobId: string): Promise<void> {
    if (!this.k.jobs.list().some((e) => e.id === jobId)) return;
    const r = await this.k.executor.execute({
      actions: [{ kind: 'suspend', jobId, reason: 'removed from the controller' }],
    });
    if (r.failed[0]) throw new Error(r.failed[0].error);
  }

  /** What runs according to the job statuses: how a restarted controller resumes. */
  running(): Map<string, CurrentJob> {
    const out = new Map<string, CurrentJob>();
    for (const e of this.k.jobs.active()) {
      const cur = currentOf(e.job);
      if (cur) out.set(e.id, cur);
    }
    return out;
  }

  attach(events: BackendEvents): void {
    this.timer = setInterval(() => void this.checkCompletions(events), this.o.completionCheckMs ?? 5000);
  }

  /** Only the leader writes: a replica that lost the lease drops the reports. */
  reportJobs(reports: readonly JobReport[]): void {
    if (this.k.leader.isLeader()) this.progress.push(reports);
  }

  private async checkCompletions(events: BackendEvents): Promise<void> {
    if (this.checking || !this.k.leader.isLeader()) return;
    this.checking = true;
    try {
      for (const e of this.k.jobs.active()) {
        const verdict = await this.k.completion.check(e.job);
        if (verdict !== 'running') events.onJobFinished(e.id, verdict);
      }
    } catch (err) {
      this.o.onError?.(err);
    } finally {
      this.checking = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.progress.idle();
  }
}
