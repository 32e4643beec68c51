/**
 * A training job as submitted (API body, workload file, or a Kubernetes custom resource).
 * Validated with zod at the boundary; everything inside the runtime uses the parsed type.
 */
import { z } from 'zod';
import { nameSegmentSchema } from '../../../shared/src/topics';
import { perWorkerBatch as perWorkerBatchOf } from './batch';
import { roleConstraintsSchema } from './node-constraint-schema';

/** Base units of `shared/src/units.ts`, as Kubernetes' own: a bare number is cores, bytes, devices. */
const resources = z
  .record(z.string().min(1), z.number().finite().min(0))
  .describe(
    'Kubernetes resource name → amount in base units: `cpu` in cores (0.5 = 500m), `memory` in bytes (2 GiB = 2147483648, not 2), `nvidia.com/gpu` in devices',
  );

/** Ground truth of an emulated job (local mode only): how fast it really runs and how its loss falls. */
export const emulationSchema = z
  .object({
    /** Paper Eq. 4 (sync, 5 terms) or Eq. 3 (async, 4 terms) coefficients θ ≥ 0. */
    theta: z.array(z.number().finite().min(0)).min(4).max(5),
    /** Paper Eq. 1 coefficients β0, β1, β2 ≥ 0 of the true loss curve (k in steps). */
    beta: z.tuple([z.number().positive(), z.number().positive(), z.number().min(0)]),
    /** Relative Gaussian noise on each logged loss. */
    lossNoise: z.number().min(0).max(1).default(0.02),
    /** Relative noise on each logged speed. */
    speedNoise: z.number().min(0).max(1).default(0.03),
  })
  .strict();
export type EmulationSpec = z.infer<typeof emulationSchema>;

export const jobSpecSchema = z
  .object({
    namespace: nameSegmentSchema.default('default'),
    name: nameSegmentSchema,
    mode: z.enum(['sync', 'async']).default('sync'),
    /**
     * Which task's log tells the job's progress: its workers (MXNet, PyTorch), or its coordinator —
     * the `scheduler` task, TF 2.x ParameterServerStrategy's chief, whose `Model.fit` prints the
     * job's global steps, loss and step time while the workers print nothing.
     */
    progressFrom: z.enum(['workers', 'coordinator']).default('workers'),
    /** Sync: the global batch M (per-worker batch ⌊M/w⌋). Async: the per-worker batch. See `batch.ts`. */
    batchSize: z
      .number()
      .int()
      .positive()
      .describe(
        'samples per step: sync, the global batch (per worker ⌊batchSize/workers⌋); async, per worker',
      ),
    stepsPerEpoch: z.number().int().positive().describe('training steps (mini-batches) per epoch'),
    /**
     * Convergence rule: per-epoch normalised loss decrease below `threshold` for `patience` epochs.
     * `stopsJob: false`: the rule only predicts; the program ends the job itself (fixed epochs).
     */
    convergence: z
      .object({
        threshold: z.number().positive().max(0.5),
        patience: z.number().int().min(1).max(20),
        stopsJob: z.boolean().optional(),
      })
      .strict()
      .default({ threshold: 0.02, patience: 2 }),
    /** A prior on the epochs needed, used until the convergence model is fitted. */
    maxEpochs: z
      .number()
      .int()
      .positive()
      .default(50)
      .describe('a prior on the epochs needed, used until the convergence model is fitted'),
    psDemand: resources.describe(
      'what one parameter server holds; amounts in base units: `cpu` in cores, `memory` in bytes (2 GiB = 2147483648, not 2), `nvidia.com/gpu` in devices',
    ),
    workerDemand: resources.describe(
      'what one worker holds; amounts in base units: `cpu` in cores, `memory` in bytes (4 GiB = 4294967296, not 4), `nvidia.com/gpu` in devices',
    ),
    minPs: z.number().int().min(1).default(1),
    maxPs: z.number().int().min(1).default(4),
    minWorkers: z.number().int().min(1).default(1),
    maxWorkers: z.number().int().min(1).default(8),
    /**
     * What the job trains (e.g. `resnet-50`): jobs that name the same model and run in the same mode
     * at the same batch size share their measured speeds, so a new one starts with a speed model.
     */
    model: z.string().min(1).max(253).optional(),
    emulation: emulationSchema.optional(),
    /** Where each role may run (Kubernetes: from the pod templates); absent: anywhere. */
    nodeConstraints: roleConstraintsSchema.optional(),
  })
  .strict()
  .refine((s) => s.minPs <= s.maxPs, { message: 'minPs must be ≤ maxPs', path: ['minPs'] })
  .refine((s) => s.minWorkers <= s.maxWorkers, {
    message: 'minWorkers must be ≤ maxWorkers',
    path: ['minWorkers'],
  });

export type JobSpec = z.infer<typeof jobSpecSchema>;
/** What callers may send: defaults filled in by the schema. */
export type JobSpecInput = z.input<typeof jobSpecSchema>;

/** `namespace/name`, the id used by policies and plans. */
export const jobIdOf = (s: Pick<JobSpec, 'namespace' | 'name'>): string => `${s.namespace}/${s.name}`;

/** Per-worker mini-batch at `workers` workers (the one definition is `batch.ts`). */
export const perWorkerBatch = (s: Pick<JobSpec, 'mode' | 'batchSize'>, workers: number): number =>
  perWorkerBatchOf(s.mode, s.batchSize, workers);

/** Parses a job spec; the error names the first bad field. */
export function parseJobSpec(input: unknown): { ok: true; spec: JobSpec } | { ok: false; error: string } {
  const r = jobSpecSchema.safeParse(input);
  if (r.success) return { ok: true, spec: r.data };
  const issue = r.error.issues[0];
  return { ok: false, error: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` };
}
