/**
 * The JSON the HTTP API answers with, as zod schemas: the source of the OpenAPI document
 * (`openapi.ts`) and of the dashboard's types. A test parses real controller output with them, so
 * the documentation cannot drift from what is served.
 */
import { z } from 'zod';
import { intervalSchema, jobPlanSchema, placementEntrySchema } from '../../../shared/src/schemas';
import { JOB_PHASES } from './job-record';
import { JOB_STATES } from './job-state';

const count = z.number().int().min(0);
const shapeSchema = z.object({ ps: count, workers: count });
const remainingSchema = z.object({
  steps: z.number().min(0),
  lower: z.number().min(0),
  upper: z.number().min(0),
});

const convergenceSchema = z.union([
  z.object({
    status: z.literal('ok'),
    predictedTotalSteps: z.number().min(0),
    lower: z.number().min(0),
    upper: z.number().min(0),
    /** Eq. 1 coefficients of the raw loss: l(k) = 1 / (β0·k + β1) + β2, k = step − fitStartStep. */
    beta: z.tuple([z.number(), z.number(), z.number()]),
    /**
     * Step where the fitted curve starts: 0, or after a learning-rate drop, or the delayed origin of a
     * fit after a warm-up (ADR 0022).
     */
    fitStartStep: z.number().min(0),
    /** Present when an exponential l(k) = a·e^(−r·k) + c gave the prediction instead (ADR 0020). */
    exponential: z.object({ a: z.number(), r: z.number(), c: z.number() }).optional(),
  }),
  z.object({ status: z.literal('insufficient-data'), reason: z.string().nullable() }),
]);

/** One job as `GET /api/v1/jobs` and `GET /api/v1/jobs/{ns}/{name}` show it. */
export const jobViewSchema = z
  .object({
    id: z.string().describe('namespace/name'),
    namespace: z.string(),
    name: z.string(),
    mode: z.enum(['sync', 'async']),
    phase: z.enum(JOB_PHASES),
    state: z
      .enum(JOB_STATES)
      .describe('the phase as observed: `resizing` while a rollout changes its shape (tasks restarting)'),
    reason: z.string().nullable().describe('why the job waits, when it does'),
    shape: shapeSchema.nullable().describe('what runs now; null when nothing of the job runs'),
    placement: z.array(placementEntrySchema),
    restarts: count.describe('checkpoint → restart cycles (resizes, pre-run shape changes included)'),
    shapes: z.array(shapeSchema).describe('the distinct shapes the job ran at, in order'),
    submittedAt: z.number().describe('job seconds (runtime clock) at submission'),
    finishedAt: z.number().nullable().describe('job seconds at completion'),
    jct: z.number().nullable().describe('job completion time, job seconds'),
    end: z
      .object({
        outcome: z.enum(['succeeded', 'failed']),
        reason: z.string().describe('Converged, WorkersSucceeded, TaskFailed, …'),
        message: z.string(),
      })
      .nullable()
      .describe('how the job ended (done or failed); null while it is not over'),
    degraded: z
      .object({
        stage: z.enum(['refit', 'plan', 'rollout']),
        reason: z.string(),
        sinceMs: z.number().describe('wall-clock ms since when'),
      })
      .nullable()
      .describe(
        'why the job is not scheduled as it should be (its refit, planning or rollout failed); the others are',
      ),
    sidecars: z
      .record(z.string(), z.enum(['online', 'done', 'lost']))
      .describe("each task's sidecar as its last status said, by `role/index`"),
    observations: z.object({
      records: count,
      lossPoints: count,
      stepsDone: z.number().min(0),
      speedShapes: z.array(
        z.object({
          ps: count,
          workers: count,
          stepsPerSec: z.number(),
          weight: z.number().optional(),
        }),
      ),
    }),
    models: z
      .object({
        convergence: convergenceSchema,
        speedFitted: z.boolean(),
        remaining: remainingSchema.describe('remaining steps with an interval'),
      })
      .nullable()
      .describe('null before the first fit'),
    plan: jobPlanSchema.describe('the retained MQTT plan message of the job'),
  })
  .describe('A job as the controller knows it');
export type JobView = z.infer<typeof jobViewSchema>;

export const jobListSchema = z.object({ jobs: z.array(jobViewSchema) });

/** `GET /api/v1/what-if`: the predicted remaining time of a job at another shape. */
export const whatIfSchema = z.object({
  id: z.string(),
  shape: shapeSchema,
  withinLimits: z.boolean().describe("false when the shape lies outside the job's minPs..maxWorkers"),
  note: z.string().optional().describe('why the shape lies outside the limits'),
  predictedRemainingSec: intervalSchema
    .nullable()
    .describe('job seconds, with an interval; null when no speed is predicted'),
  stepsPerSec: z.object({ stepsPerSec: z.number(), lower: z.number(), upper: z.number() }),
  remainingSteps: remainingSchema,
  fitted: z.boolean().describe('both models fitted (else the answer rests on priors)'),
});
export type WhatIf = z.infer<typeof whatIfSchema>;

export const errorSchema = z.object({
  error: z.object({ status: z.number().int(), message: z.string() }),
});

const ts = z.number().describe('ms since the Unix epoch');

/** The server-sent events of `GET /api/v1/events`: the SSE `event:` field is the `type`. */
export const eventSchemas = {
  hello: z.object({ jobs: count }).describe('sent first on every connection'),
  decision: z
    .object({ type: z.literal('decision'), round: count, actions: z.array(z.unknown()), ts })
    .describe('a round applied plan actions (start, resize, suspend, replace-worker)'),
  job: z
    .object({ type: z.literal('job'), id: z.string(), phase: z.string(), ts })
    .describe("a job's phase changed (or `removed`)"),
  progress: z
    .object({ type: z.literal('progress'), jobs: z.array(z.string()), ts })
    .describe("the progress or predictions of these jobs changed (sent by the dashboard's sampler)"),
  dropped: z
    .object({ dropped: count })
    .describe('this client read too slowly; so many older events were dropped'),
} as const;
