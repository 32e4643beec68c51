/**
 * The OptimusJob resource as TypeScript: spec parsing (the controller re-checks what the CRD's
 * CEL rules check, so a cluster without CEL still cannot feed it an invalid job) and status.
 */
import { z } from 'zod';
import type { Resources } from '../../../../shared/src/units';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import type { PodRole } from './names';
import { DMLC_PS_ROOT_PORT, jobIdOf } from './names';
import type { PodTemplate } from '../rollout/pod-template';
import { podRequests, podTemplateSchema, trainingContainerIndex } from '../rollout/pod-template';

const replicaSpec = z.object({ template: podTemplateSchema });

/** The training container (see `trainingContainerIndex`) must say what it runs: the controller wraps it. */
function checkTrainingContainer(
  spec: {
    replicaSpecs: Readonly<Record<string, { template: z.infer<typeof podTemplateSchema> } | undefined>>;
  },
  ctx: z.RefinementCtx,
): void {
  for (const [type, rs] of Object.entries(spec.replicaSpecs)) {
    if (!rs) continue;
    const containers = rs.template.spec.containers;
    const i = trainingContainerIndex(containers, rs.template.metadata?.annotations);
    const path = ['replicaSpecs', type, 'template', 'spec', 'containers'];
    if (i < 0) {
      ctx.addIssue({ code: 'custom', path, message: 'no container has the name its annotation names' });
      continue;
    }
    const c = containers[i];
    if (!c?.command?.length)
      ctx.addIssue({
        code: 'custom',
        path: [...path, i, 'command'],
        message:
          'the training container needs an explicit command: the controller runs it behind the log tee ' +
          '(docs/training-contract.md)',
      });
    if (!c?.image) ctx.addIssue({ code: 'custom', path: [...path, i, 'image'], message: 'is required' });
  }
}

export const optimusJobSpecSchema = z
  .object({
    mode: z.enum(['sync', 'async']),
    /** Whose log tells the job's progress (see `runtime/job-spec.ts`): the coordinator needs its template. */
    progressFrom: z.enum(['workers', 'coordinator']).optional(),
    replicaSpecs: z.object({
      PS: replicaSpec,
      Worker: replicaSpec,
      Scheduler: replicaSpec.optional(),
    }),
    /** Port of the MXNet scheduler (`DMLC_PS_ROOT_PORT`) and of the job's headless Service. */
    port: z.number().int().min(1).max(65535).optional(),
    /** Sync: the global batch of one step. Async: one worker's batch. See `runtime/batch.ts`. */
    batchSize: z.number().int().min(1),
    /** What the job trains: jobs of the same model, mode and batch size share measured speeds (ADR 0021). */
    model: z.string().min(1).max(253).optional(),
    convergence: z.object({
      threshold: z.number().gt(0).max(0.5),
      patience: z.number().int().min(1).max(20),
      stepsPerEpoch: z.number().int().min(1),
      maxEpochs: z.number().int().min(1).optional(),
    }),
    scaling: z.object({
      minPs: z.number().int().min(1),
      maxPs: z.number().int().min(1),
      minWorkers: z.number().int().min(1),
      maxWorkers: z.number().int().min(1),
    }),
    checkpoint: z
      .object({
        claimName: z.string().min(1).optional(),
        mountPath: z.string().startsWith('/').optional(),
        gracePeriodSeconds: z.number().int().min(1).max(3600).optional(),
      })
      .optional(),
    logFormat: z.string().optional(),
    parameterBlocks: z.array(z.object({ name: z.string(), size: z.number().int().min(1) })).optional(),
  })
  .superRefine(checkTrainingContainer)
  .refine((s) => s.scaling.minPs <= s.scaling.maxPs, { message: 'scaling.minPs must be <= scaling.maxPs' })
  .refine((s) => s.scaling.minWorkers <= s.scaling.maxWorkers, {
    message: 'scaling.minWorkers must be <= scaling.maxWorkers',
  })
  .refine((s) => s.progressFrom !== 'coordinator' || s.replicaSpecs.Scheduler !== undefined, {
    message: 'progressFrom coordinator needs a Scheduler (coordinator) template',
  });

export type OptimusJobSpec = z.infer<typeof optimusJobSpecSchema>;

export const JOB_PHASES = ['Pending', 'Running', 'Resizing', 'Suspended', 'Succeeded', 'Failed'] as const;
export type JobPhase = (typeof JOB_PHASES)[number];

export interface JobCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/**
 * Training progress in the shape of Kubeflow Trainer's `status.trainerStatus` (KEP-2779), so tools
 * that read TrainJobs read OptimusJobs too. Written by the controller from its models, not by the pods.
 */
export interface TrainerStatus {
  /** 0..100, whole percent of the predicted total steps. */
  readonly progressPercentage?: number;
  /** Seconds to the predicted completion, as of `lastUpdatedTime`. */
  readonly estimatedRemainingSeconds?: number;
  readonly metrics?: readonly { readonly name: string; readonly value: string }[];
  readonly lastUpdatedTime?: string;
}

export interface OptimusJobStatus {
  readonly phase?: JobPhase;
  readonly observedGeneration?: number;
  readonly shape?: JobShape;
  readonly placement?: readonly TaskPlacement[];
  readonly restarts?: number;
  readonly startTime?: string;
  readonly completionTime?: string;
  readonly jctSeconds?: number;
  readonly progress?: string;
  readonly predictedCompletionTime?: string;
  readonly trainerStatus?: TrainerStatus;
  /** `estimatedRemainingSeconds` for humans (`1h05m`): the ETA printer column. */
  readonly eta?: string;
  readonly observationsConfigMap?: string;
  readonly models?: Readonly<Record<string, unknown>>;
  readonly conditions?: readonly JobCondition[];
}

export interface OptimusJob {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly creationTimestamp?: string | Date;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: unknown;
  readonly status?: OptimusJobStatus;
}

export type ParsedSpec =
  { readonly ok: true; readonly spec: OptimusJobSpec } | { readonly ok: false; readonly error: string };

/** Validates a job's spec; the error names the offending fields. */
export function parseSpec(spec: unknown): ParsedSpec {
  const r = optimusJobSpecSchema.safeParse(spec);
  if (r.success) return { ok: true, spec: r.data };
  return { ok: false, error: r.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ') };
}

export const jobIdOfResource = (job: OptimusJob): string =>
  jobIdOf(job.metadata.namespace, job.metadata.name);

/** What the MXNet scheduler pod asks for when the job gives it no template: it only brokers connections. */
export const SCHEDULER_REQUESTS = { cpu: '100m', memory: '256Mi' } as const;

/** The pod template of `role`; the scheduler's defaults to the PS template with {@link SCHEDULER_REQUESTS}. */
export function templateOf(spec: OptimusJobSpec, role: PodRole): PodTemplate {
  // zod checked the fields the controller reads; the rest is the user's pod as written.
  const asTemplate = (t: unknown) => t as PodTemplate;
  if (role === 'ps') return asTemplate(spec.replicaSpecs.PS.template);
  if (role === 'worker') return asTemplate(spec.replicaSpecs.Worker.template);
  if (spec.replicaSpecs.Scheduler) return asTemplate(spec.replicaSpecs.Scheduler.template);
  const ps = asTemplate(spec.replicaSpecs.PS.template);
  const main = trainingContainerIndex(ps.spec.containers, ps.metadata?.annotations);
  return {
    ...ps,
    spec: {
      ...ps.spec,
      containers: ps.spec.containers.map((c, i) =>
        i === main ? { ...c, resources: { requests: { ...SCHEDULER_REQUESTS } } } : c,
      ),
    },
  };
}

/**
 * Per-task demand of one parameter server, one worker and the scheduler, in base units: what the
 * kube-scheduler reserves for a pod of each template (containers, init containers, overhead).
 */
export function demandOf(spec: OptimusJobSpec): { ps: Resources; worker: Resources; scheduler: Resources } {
  return {
    ps: podRequests(templateOf(spec, 'ps').spec),
    worker: podRequests(templateOf(spec, 'worker').spec),
    scheduler: podRequests(templateOf(spec, 'scheduler').spec),
  };
}

/** The MXNet scheduler's port (`DMLC_PS_ROOT_PORT`). */
export const schedulerPortOf = (spec: OptimusJobSpec): number => spec.port ?? DMLC_PS_ROOT_PORT;

/** Seconds since the epoch of the job's creation (its arrival time), or NaN when unknown. */
export function arrivalSeconds(job: OptimusJob): number {
  const t = job.metadata.creationTimestamp;
  return t === undefined ? NaN : new Date(t).getTime() / 1000;
}

export const DEFAULT_CHECKPOINT_GRACE_SEC = 120;
/**
 * Seconds a task has between SIGTERM and SIGKILL to save its checkpoint: `checkpoint.gracePeriodSeconds`,
 * else the worker template's `terminationGracePeriodSeconds`, else 120.
 */
export const gracePeriodOf = (spec: OptimusJobSpec): number =>
  spec.checkpoint?.gracePeriodSeconds ??
  spec.replicaSpecs.Worker.template.spec.terminationGracePeriodSeconds ??
  DEFAULT_CHECKPOINT_GRACE_SEC;
