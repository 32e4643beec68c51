/**
 * The OptimusJob resource as TypeScript: spec parsing (the controller re-checks what the CRD's
 * CEL rules check, so a cluster without CEL still cannot feed it an invalid job) and status.
 */
import { z } from 'zod';
import type { Resources } from '../../../shared/src/units';
import type { JobShape, TaskPlacement } from '../scheduling/types';
import { jobIdOf } from './names';
import { parseQuantity, parseResources } from './quantity';

const quantity = z.union([z.string(), z.number()]).refine(
  (q) => {
    try {
      return parseQuantity(q) >= 0;
    } catch {
      return false;
    }
  },
  { message: 'must be a Kubernetes quantity' },
);
const quantities = z.record(z.string(), quantity);
const taskSpec = z.object({ resources: z.object({ requests: quantities, limits: quantities.optional() }) });

export const optimusJobSpecSchema = z
  .object({
    mode: z.enum(['sync', 'async']),
    container: z.object({
      image: z.string().min(1),
      imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
      command: z.array(z.string()).min(1),
      args: z.array(z.string()).optional(),
      env: z.array(z.object({ name: z.string().min(1), value: z.string().optional() })).optional(),
      port: z.number().int().min(1).max(65535).optional(),
    }),
    ps: taskSpec,
    worker: taskSpec,
    batchSize: z.number().int().min(1),
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
  .refine((s) => s.scaling.minPs <= s.scaling.maxPs, { message: 'scaling.minPs must be <= scaling.maxPs' })
  .refine((s) => s.scaling.minWorkers <= s.scaling.maxWorkers, {
    message: 'scaling.minWorkers must be <= scaling.maxWorkers',
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

/** Per-task demand (requests) of one parameter server and one worker, in base units. */
export function demandOf(spec: OptimusJobSpec): { ps: Resources; worker: Resources } {
  return {
    ps: parseResources(spec.ps.resources.requests),
    worker: parseResources(spec.worker.resources.requests),
  };
}

/** Seconds since the epoch of the job's creation (its arrival time), or NaN when unknown. */
export function arrivalSeconds(job: OptimusJob): number {
  const t = job.metadata.creationTimestamp;
  return t === undefined ? NaN : new Date(t).getTime() / 1000;
}

export const DEFAULT_CHECKPOINT_GRACE_SEC = 120;
export const gracePeriodOf = (spec: OptimusJobSpec): number =>
  spec.checkpoint?.gracePeriodSeconds ?? DEFAULT_CHECKPOINT_GRACE_SEC;
