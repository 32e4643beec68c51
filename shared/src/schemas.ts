/**
 * Message schemas: the single source of truth for every payload on the wire.
 * Types are derived from the schemas; every receiver validates with them.
 * All payloads carry `v` so a future version can be told apart and rejected cleanly.
 */
import { z } from 'zod';
import { roleSchema } from './topics';

const finite = z.number().finite();
const nonNegative = finite.min(0);

export const FRAMEWORKS = [
  'mxnet',
  'gluon',
  'keras',
  'tf-estimator',
  'lightning',
  'huggingface',
  'jsonl',
] as const;
export const frameworkSchema = z.enum(FRAMEWORKS);
export type Framework = z.infer<typeof frameworkSchema>;

export const RECORD_KINDS = ['batch', 'epoch', 'validation', 'checkpoint'] as const;
export const recordKindSchema = z.enum(RECORD_KINDS);
export type RecordKind = z.infer<typeof recordKindSchema>;

/** One progress record from one task's training log (topic `.../metrics`, QoS 1, not retained). */
export const metricsRecordSchema = z
  .object({
    v: z.literal(1),
    /** Per task, strictly increasing, also across sidecar restarts: the de-duplication key. */
    seq: z.number().int().min(0),
    /** Milliseconds since the Unix epoch when the line was read. */
    ts: nonNegative,
    framework: frameworkSchema,
    kind: recordKindSchema,
    epoch: z.number().int().min(0).nullable(),
    batch: z.number().int().min(0).nullable(),
    /** Samples per second of this task (MXNet's Speedometer figure is per worker). */
    samplesPerSec: nonNegative.nullable(),
    /** Seconds per mini-batch step of this task. */
    stepTime: nonNegative.nullable(),
    loss: finite.nullable(),
    /** Which metric `loss` came from; a proxy is labelled, e.g. `1-accuracy`. */
    lossName: z.string().max(128).nullable(),
    metrics: z.record(z.string().max(128), finite),
  })
  .strict();
export type MetricsRecord = z.infer<typeof metricsRecordSchema>;

export const TASK_STATES = ['online', 'done', 'lost'] as const;
/** Retained task status (topic `.../status`); the sidecar's Last Will publishes `lost`. */
export const taskStatusSchema = z
  .object({ v: z.literal(1), state: z.enum(TASK_STATES), ts: nonNegative })
  .strict();
export type TaskStatus = z.infer<typeof taskStatusSchema>;

export const placementEntrySchema = z
  .object({ role: roleSchema, index: z.number().int().min(0), server: z.string().min(1) })
  .strict();
export type PlacementEntry = z.infer<typeof placementEntrySchema>;

export const intervalSchema = z
  .object({ value: nonNegative, lower: nonNegative, upper: nonNegative })
  .strict();

/** The controller's current decision for one job (topic `.../<job>/plan`, retained). */
export const jobPlanSchema = z
  .object({
    v: z.literal(1),
    ts: nonNegative,
    state: z.enum(['pending', 'pre-run', 'running', 'resizing', 'waiting', 'done', 'failed']),
    ps: z.number().int().min(0),
    workers: z.number().int().min(0),
    placement: z.array(placementEntrySchema),
    /** Why the job waits, when it does. */
    reason: z.string().nullable(),
    /** Predicted remaining seconds at this shape, with an interval; null while models are not fitted. */
    predictedRemainingSec: intervalSchema.nullable(),
    /** Predicted completion as ms since epoch; null while unknown. */
    predictedCompletionTs: intervalSchema.nullable(),
    stepsPerSec: nonNegative.nullable(),
    remainingSteps: nonNegative.nullable(),
  })
  .strict();
export type JobPlan = z.infer<typeof jobPlanSchema>;

/** The controller's own retained status; its Last Will publishes `offline`. */
export const controllerStatusSchema = z
  .object({
    v: z.literal(1),
    state: z.enum(['online', 'offline']),
    ts: nonNegative,
    leader: z.boolean().optional(),
    id: z.string().optional(),
  })
  .strict();
export type ControllerStatus = z.infer<typeof controllerStatusSchema>;
