/**
 * Message schemas: the single source of truth for every payload on the wire.
 * Types are derived from the schemas; every receiver validates with them.
 * All payloads carry `v` so a future version can be told apart and rejected cleanly.
 */
import { z } from 'zod';
import { BOUNDS, type BoundedField } from './bounds';
import { roleSchema } from './topics';

const finite = z.number().finite();
const nonNegative = finite.min(0);
/** A number inside the physical bounds of `field` (see `bounds.ts`); outside is `out-of-range`. */
const bounded = (field: BoundedField) => finite.min(BOUNDS[field].min).max(BOUNDS[field].max);
const boundedInt = (field: BoundedField) => bounded(field).int();
/** Marks a custom check as a bounds check, so decoders count its failures as `out-of-range`. */
export const OUT_OF_RANGE = { outOfRange: true } as const;

/** The log formats the sidecar has a parser for: a record's `framework`. */
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

/**
 * Every value a log-format setting takes: a framework, or `auto` (try each). The one list the
 * sidecar (`OPTIMUS_LOG_FORMAT`), the webhook (`optimus.dev/log-format`) and the OptimusJob's
 * `spec.logFormat` accept (the CRD's enum is FRAMEWORKS: unset means auto; a test keeps it equal).
 */
export const LOG_FORMATS = ['auto', ...FRAMEWORKS] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const RECORD_KINDS = ['batch', 'epoch', 'validation', 'checkpoint'] as const;
export const recordKindSchema = z.enum(RECORD_KINDS);
export type RecordKind = z.infer<typeof recordKindSchema>;

/** One progress record from one task's training log (inside a batch, or alone in the v1 form). */
export const metricsRecordSchema = z
  .object({
    v: z.literal(1),
    /** Per task, strictly increasing, also across sidecar restarts: the de-duplication key. */
    seq: boundedInt('seq'),
    /** Milliseconds since the Unix epoch when the line was read. */
    ts: bounded('ts'),
    framework: frameworkSchema,
    kind: recordKindSchema,
    epoch: boundedInt('epoch').nullable(),
    batch: boundedInt('batch').nullable(),
    /** Samples per second of this task (MXNet's Speedometer figure is per worker). */
    samplesPerSec: bounded('samplesPerSec').nullable(),
    /** Seconds per mini-batch step of this task. */
    stepTime: bounded('stepTime').nullable(),
    loss: bounded('value').nullable(),
    /** Which metric `loss` came from; a proxy is labelled, e.g. `1-accuracy`. */
    lossName: z.string().max(BOUNDS.nameLength.max).nullable(),
    metrics: z
      .record(z.string().max(BOUNDS.nameLength.max), bounded('value'))
      .refine((m) => Object.keys(m).length <= BOUNDS.metricCount.max, {
        message: `at most ${BOUNDS.metricCount.max} metrics`,
        params: OUT_OF_RANGE,
      }),
  })
  .strict();
export type MetricsRecord = z.infer<typeof metricsRecordSchema>;

/** Records per batch message: 256 records of ~300 bytes stay well under the 64 KiB payload limit. */
export const MAX_BATCH_RECORDS = 256;

/**
 * Wire version 2 of topic `.../metrics` (QoS 1, not retained): several consecutive records of one task
 * in one message, each a complete v1 record. Receivers check every record on its own, so one bad record
 * never costs its neighbours; v1 messages (one bare record) stay accepted.
 */
export const metricsBatchSchema = z
  .object({
    v: z.literal(2),
    records: z.array(z.unknown()).min(1).max(MAX_BATCH_RECORDS),
  })
  .strict();
export type MetricsBatch = { v: 2; records: MetricsRecord[] };

/**
 * The controller's retained watermark for one task (topic `.../<role>/<index>/stored`, retained, QoS 0):
 * every `seq` in [from, through] of that task is durably stored. The sidecar keeps a record in its
 * outbox until a watermark covers it, so a record is never forgotten before the controller has it.
 */
export const storedWatermarkSchema = z
  .object({ v: z.literal(1), from: boundedInt('seq'), through: boundedInt('seq'), ts: bounded('ts') })
  .strict()
  .refine((w) => w.from <= w.through, { message: 'from must be ≤ through', path: ['from'] });
export type StoredWatermark = z.infer<typeof storedWatermarkSchema>;

export const TASK_STATES = ['online', 'done', 'lost'] as const;
/** Retained task status (topic `.../status`); the sidecar's Last Will publishes `lost`. */
export const taskStatusSchema = z
  .object({ v: z.literal(1), state: z.enum(TASK_STATES), ts: bounded('ts') })
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
