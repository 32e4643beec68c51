/**
 * The runtime's backend port (`runtime/backend.ts`) on Kubernetes: jobs come from OptimusJobs,
 * the observation from the informer caches (pods and OptimusJobs), every write from the executor.
 */
import type { Backend, BackendEvents, JobReport, Observation } from '../runtime/backend';
import type { JobSpec, JobSpecInput } from '../runtime/job-spec';
import { jobIdOf } from '../runtime/job-spec';
import type { KubernetesBackend } from './index';
import type { JobEntry } from './observe/job-source';
import type { Resources } from '../../../shared/src/units';
import { demandOf } from './api/optimus-job';
import { nodeConstraintsOf } from './observe/node-constraints';
import { addResources } from './api/quantity';
import { ProgressPublisher } from './status/progress-publisher';

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
    ...(spec.progressFrom === undefined ? {} : { progressFrom: spec.progressFrom }),
    batchSize: spec.batchSize,
    ...(spec.model === undefined ? {} : { model: spec.model }),
    stepsPerEpoch: spec.convergence.stepsPerEpoch,
    convergence: { threshold: spec.convergence.threshold, patience: spec.convergence.patience },
    ...(spec.convergence.maxEpochs !== undefined ? { maxEpochs: spec.convergence.maxEpochs } : {}),
    psDemand: demand.ps,
    workerDemand: demand.worker,
    minPs: spec.scaling.minPs,
    maxPs: spec.scaling.maxPs,
    minWorkers: spec.scaling.minWorkers,
    maxWorkers: spec.scaling.maxWorkers,
    nodeConstraints: nodeConstraintsOf(spec),
  };
}

/** Ms a burst of informer events is gathered into one nudge of the runtime. */
const CHANGE_DEBOUNCE_MS = 100;

export class KubernetesRuntimeBackend implements Backend {
  /** Writes the runtime's per-round reports into the job statuses (coalesced, on change only). */
  readonly progress: ProgressPublisher;
  private readonly unsubscribe: (() => void)[] = [];
  private nudge: NodeJS.Timeout | undefined;

  constructor(
    private readonly k: KubernetesBackend,
    private readonly o: { debounceMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.progress = new ProgressPublisher(k.status, { onError: (err) => o.onError?.(err) });
  }

  get executor() {
    return this.k.executor;
  }

  /**
   * What runs, from the informer caches (never a list call): every OptimusJob with its pods'
   * tasks, whether its program exited, and whether its status records it as finished.
   */
  observe(): Promise<Observation> {
    return Promise.resolve(this.k.observe());
  }

  /** The job must exist as an OptimusJob: Kubernetes is the source of jobs. */
  async admit(spec: JobSpec): Promise<void> {
    const id = jobIdOf(spec);
    if (!this.k.jobs.list().some((e) => e.id === id)) throw new Error(`OptimusJob ${id} not found`);
  }

  /** Stops what runs of the job, through the executor (its pods also go with the resource). */
  async remove(jobId: string): Promise<void> {
    if (!this.k.jobs.list().some((e) => e.id === jobId)) return;
    const r = await this.k.executor.execute({
      actions: [{ kind: 'suspend', jobId, reason: 'removed from the controller' }],
    });
    if (r.failed[0]) throw new Error(r.failed[0].error);
  }

  /** A change of one of our pods or of an OptimusJob nudges the runtime (debounced). */
  attach(events: BackendEvents): void {
    const changed = () => {
      if (this.nudge) return;
      this.nudge = setTimeout(() => {
        this.nudge = undefined;
        events.changed();
      }, this.o.debounceMs ?? CHANGE_DEBOUNCE_MS);
    };
    this.unsubscribe.push(this.k.onPodChange(changed), this.k.jobs.onChange(changed));
  }

  /** Only the leader writes: a replica that lost the lease drops the reports. */
  reportJobs(reports: readonly JobReport[]): void {
    if (this.k.leader.isLeader()) this.progress.push(reports);
  }

  async close(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    clearTimeout(this.nudge);
    this.nudge = undefined;
    await this.progress.idle();
  }
}
