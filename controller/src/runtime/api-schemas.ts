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
/** A resource vector in the base units of `shared/src/units.ts`, with the units said in the schema. */
export const resourcesSchema = z
  .record(z.string(), z.number().min(0))
  .describe(
    'Kubernetes resource name → amount in base units: `cpu` in cores (0.5 = 500m), `memory` in bytes (2 GiB = 2147483648), `nvidia.com/gpu` in devices',
  );
const shapeSchema = z.object({ ps: count, workers: count });
const steps = (what: string) => z.number().min(0).describe(`${what}, in training steps (mini-batches)`);
const remainingSchema = z.object({
  steps: steps('predicted remaining work'),
  lower: steps('lower end of its interval'),
  upper: steps('upper end of its interval'),
});

const convergenceSchema = z.union([
  z.object({
    status: z.literal('ok'),
    predictedTotalSteps: steps('predicted steps from the start to convergence'),
    lower: steps('lower end of its interval'),
    upper: steps('upper end of its interval'),
    /** Eq. 1 coefficients of the raw loss: l(k) = 1 / (β0·k + β1) + β2, k = step − fitStartStep. */
    beta: z.tuple([z.number(), z.number(), z.number()]),
    /**
     * Step where the fitted curve starts: 0, or after a learning-rate drop, or the delayed origin of a
     * fit after a warm-up (ADR 0022).
     */
    fitStartStep: steps('where the fitted curve starts'),
    /** Present when an exponential l(k) = a·e^(−r·k) + c gave the prediction instead (ADR 0020). */
    exponential: z.object({ a: z.number(), r: z.number(), c: z.number() }).optional(),
  }),
  z.object({ status: z.literal('insufficient-data'), reason: z.string().nullable() }),
]);

/** The phases the API shows: the record's, and `resizing` while a rollout of the job is in flight (ADR 0035). */
const apiPhaseSchema = z.enum([...JOB_PHASES, 'resizing']);
const secOrNull = (what: string) => z.number().nullable().describe(`${what}, job seconds; null until seen`);

/** The job's target (ADR 0035): what it should run, stepped toward by the backend's executor. */
const targetViewSchema = z
  .object({
    generation: count.describe('monotonic per job: every target written for it takes the next one'),
    tasks: z.array(
      z.object({
        role: z.enum(['ps', 'worker']),
        index: count,
        server: z.string(),
        generation: count.describe('the target generation the task must have been started for'),
      }),
    ),
    inFlight: z.boolean().describe('true while what runs is not yet the target (observed ≠ target)'),
    sinceMs: z.number().describe('wall-clock ms the round wrote it'),
    deadlineMs: z.number().describe('wall-clock ms by which it must be reached, else the job is re-planned'),
    reachedAtMs: z.number().nullable().describe('wall-clock ms of the observation that showed it reached'),
    end: z
      .object({ outcome: z.enum(['succeeded', 'failed']), reason: z.string(), message: z.string() })
      .optional()
      .describe('a finish: the end recorded before anything of the job stops'),
    reason: z.string().optional().describe('why the job should hold nothing'),
    givenUp: z.string().optional().describe('set when the runtime gave a rollout up: why'),
  })
  .nullable()
  .describe("the job's target; null before its first decision");

/** What the job's restarts cost, measured per rollout (ADR 0035). */
const restartCostViewSchema = z
  .object({
    priorSec: z.number().describe('what a restart is assumed to cost until one was measured, job seconds'),
    medianSec: z.number().nullable().describe('median measured restart cost, job seconds'),
    usedSec: z.number().describe('what the policy uses: the median once measured, else the prior'),
    samples: count,
    last: z
      .object({
        generation: count,
        restart: z.boolean(),
        sigtermToCheckpointSec: secOrNull('SIGTERM → checkpoint record'),
        sigtermToGoneSec: secOrNull('SIGTERM → old tasks gone'),
        goneToRunningSec: secOrNull('old tasks gone (or target written) → new tasks running'),
        runningToFirstStepSec: secOrNull('new tasks running → first new record'),
        totalSec: secOrNull('SIGTERM → first new record, for a restart'),
        writtenToRunningSec: secOrNull('target written → new tasks running'),
      })
      .nullable()
      .describe('the latest rollout'),
  })
  .describe("what the job's restarts cost");

/** One job as `GET /api/v1/jobs` and `GET /api/v1/jobs/{ns}/{name}` show it. */
export const jobViewSchema = z
  .object({
    id: z.string().describe('namespace/name'),
    namespace: z.string(),
    name: z.string(),
    mode: z.enum(['sync', 'async']),
    demand: z
      .object({ ps: resourcesSchema, worker: resourcesSchema })
      .describe('what one parameter server and one worker of the job hold'),
    limits: z
      .object({ minPs: count, maxPs: count, minWorkers: count, maxWorkers: count })
      .describe('the shapes the scheduler may give the job'),
    phase: apiPhaseSchema,
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
      stepsDone: steps('training done so far'),
      speedShapes: z
        .array(
          z.object({
            ps: count,
            workers: count,
            stepsPerSec: z.number().describe('measured training speed, steps per second'),
            weight: z.number().optional().describe('weight of the sample in the speed fit (0..1)'),
          }),
        )
        .describe('the shapes the job was measured at'),
    }),
    models: z
      .object({
        convergence: convergenceSchema,
        speedFitted: z.boolean(),
        remaining: remainingSchema.describe('remaining steps with an interval'),
      })
      .nullable()
      .describe('null before the first fit'),
    plan: jobPlanSchema.describe(
      'the retained MQTT plan message of the job: `ts` and `predictedCompletionTs` in ms since the Unix epoch (wall clock), `predictedRemainingSec` in job seconds, `stepsPerSec` in steps per second, `remainingSteps` in steps',
    ),
    target: targetViewSchema,
    restartCost: restartCostViewSchema,
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
  stepsPerSec: z
    .object({ stepsPerSec: z.number(), lower: z.number(), upper: z.number() })
    .describe('predicted training speed at the shape, steps per second, with an interval'),
  remainingSteps: remainingSchema,
  fitted: z.boolean().describe('both models fitted (else the answer rests on priors)'),
});
export type WhatIf = z.infer<typeof whatIfSchema>;

export const errorSchema = z.object({
  error: z.object({
    status: z.number().int().describe('the HTTP status again'),
    message: z.string().describe('what went wrong, in one sentence'),
  }),
});

const ts = z.number().describe('ms since the Unix epoch');

/** The server-sent events of `GET /api/v1/events`: the SSE `event:` field is the `type`. */
export const eventSchemas = {
  hello: z.object({ jobs: count }).describe('sent first on every connection'),
  decision: z
    .object({
      type: z.literal('decision'),
      round: count,
      actions: z
        .array(
          z
            .object({
              kind: z.enum(['start', 'resize', 'suspend', 'replace-worker', 'finish']),
              jobId: z.string(),
            })
            .loose(),
        )
        .describe('the plan actions, each with its `kind` and `jobId` (controller/src/planning/types.ts)'),
      ts,
    })
    .describe('a round applied plan actions (start, resize, suspend, replace-worker, finish)'),
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

/** `GET /api/v1/cluster`: every server with what holds it, and utilisation over time. */
export const clusterViewSchema = z
  .object({
    resources: z.array(z.string()).describe('the resources any server offers: cpu, memory, then the rest'),
    servers: z.array(
      z.object({
        name: z.string(),
        capacity: resourcesSchema,
        reserved: resourcesSchema.describe(
          'held by what this scheduler does not manage (other pods, the system); base units',
        ),
        used: resourcesSchema.describe("held by our jobs' tasks; base units"),
        tasks: z.array(
          z.object({
            job: z.string().describe('namespace/name'),
            role: z.enum(['ps', 'worker']),
            index: count,
            preRun: z.boolean().describe('the task runs a speed sample of the pre-run'),
          }),
        ),
      }),
    ),
    capacity: resourcesSchema.describe('summed over servers; base units'),
    used: resourcesSchema.describe('summed over servers; base units'),
    reserved: resourcesSchema.describe('summed over servers; base units'),
    utilisation: z
      .array(
        z.object({
          t: z.number().describe('ms since the Unix epoch (wall clock)'),
          at: z
            .number()
            .describe("the same time in job seconds since the runtime's origin (the clock charts show)"),
          used: resourcesSchema.describe("our tasks plus others' reservations; base units"),
          capacity: resourcesSchema,
        }),
      )
      .describe('samples over time, oldest first'),
    elapsedSec: z.number().nullable().describe('job seconds now (the last sample holds until then)'),
  })
  .describe('The cluster: servers, what holds them, utilisation');
export type ClusterViewJson = z.infer<typeof clusterViewSchema>;

const interval = (unit: string) =>
  z.object({ value: z.number(), lower: z.number(), upper: z.number() }).describe(`with an interval; ${unit}`);

/** `GET /api/v1/overview`: the dashboard's Jobs table (controller/src/dashboard/job-rows.ts). */
export const overviewSchema = z
  .object({
    now: z.number().describe('ms since the Unix epoch (wall clock) when this was computed'),
    elapsedSec: z.number().describe("job seconds since the runtime's origin"),
    timeScale: z.number().describe("job seconds per wall second (local mode's --time-scale; 1 in a cluster)"),
    counts: z.record(z.string(), count).describe('jobs per state'),
    jobs: z.array(
      z.object({
        id: z.string().describe('namespace/name'),
        name: z.string(),
        namespace: z.string(),
        mode: z.enum(['sync', 'async']),
        phase: apiPhaseSchema,
        state: z
          .enum(JOB_STATES)
          .describe('the phase as observed: `resizing` while a rollout changes its shape'),
        shape: shapeSchema.nullable(),
        progress: z
          .number()
          .min(0)
          .max(1)
          .nullable()
          .describe('fraction of the predicted total steps; null until fitted'),
        stepsDone: steps('training done so far'),
        predictedCompletion: interval('ms since the Unix epoch (wall clock)').nullable(),
        predictedRemainingSec: interval('job seconds').nullable(),
        restarts: count,
        queuePosition: count.nullable().describe('1-based among the jobs that hold nothing, oldest first'),
        waiting: z
          .string()
          .nullable()
          .describe('why the job does not run, in words; null while it simply runs'),
        jct: z.number().nullable().describe('job completion time, job seconds'),
        submittedAt: z.number().describe('job seconds at submission'),
        finishedAt: z.number().nullable().describe('job seconds at completion'),
      }),
    ),
  })
  .describe("The dashboard's Jobs table");

const lossPoint = z.object({ step: z.number().describe('training step'), loss: z.number() });
const shapeOrNull = shapeSchema.nullable();

/** `GET /api/v1/jobs/{ns}/{name}/history`: the dashboard's One-job page (controller/src/dashboard/job-detail.ts). */
export const jobDetailSchema = z
  .object({
    id: z.string(),
    phase: apiPhaseSchema,
    state: z.enum(JOB_STATES),
    elapsedSec: z.number().describe("job seconds since the runtime's origin, now"),
    submittedAt: z.number().describe('job seconds at submission'),
    finishedAt: z.number().nullable().describe('job seconds at completion'),
    jct: z.number().nullable().describe('job completion time, job seconds'),
    remainingSec: interval('job seconds').nullable().describe('predicted remaining at the current shape'),
    predictedCompletion: interval('ms since the Unix epoch (wall clock)').nullable(),
    limits: z.object({ minPs: count, maxPs: count, minWorkers: count, maxWorkers: count }),
    loss: z.object({
      total: count.describe('loss points recorded (at most 400 are sent, evenly strided)'),
      points: z.array(lossPoint),
      curve: z.array(lossPoint).nullable().describe('the fitted Eq. 1 curve, sampled; null before a fit'),
    }),
    convergence: z.union([
      z.object({
        status: z.literal('ok'),
        predictedTotalSteps: steps('predicted steps to convergence'),
        lower: steps('lower end'),
        upper: steps('upper end'),
        stepsDone: steps('done so far'),
      }),
      z.object({ status: z.literal('insufficient-data'), reason: z.string() }),
    ]),
    predictions: z
      .array(
        z.object({
          t: z.number().describe('ms since the Unix epoch (wall clock)'),
          at: z.number().describe('the same time in job seconds'),
          stepsDone: steps('done then'),
          progress: z.number().nullable(),
          totalSteps: interval('training steps').nullable(),
          completion: interval('ms since the Unix epoch (wall clock)').nullable(),
        }),
      )
      .describe('how the prediction moved'),
    speed: z.object({
      fitted: z.boolean(),
      needs: count.describe('shapes the job must have run before its own speed model is fitted'),
      current: shapeOrNull,
      measured: z.array(
        z.object({ ps: count, workers: count, stepsPerSec: z.number().describe('steps per second') }),
      ),
      grid: z
        .array(
          z.object({
            ps: count,
            workers: count,
            stepsPerSec: z.number().describe('predicted, steps per second'),
            lower: z.number(),
            upper: z.number(),
          }),
        )
        .describe('the speed model over shapes from the minimums'),
    }),
    spans: z
      .array(
        z.object({
          since: z.number().describe('ms since the Unix epoch (wall clock)'),
          until: z.number().nullable(),
          sinceAt: z.number().describe('the same times in job seconds'),
          untilAt: z.number().nullable(),
          ps: count,
          workers: count,
          preRun: z.boolean().describe('a speed sample of the pre-run'),
        }),
      )
      .describe('the shape over time'),
    decisions: z.array(
      z.object({
        t: z.number().describe('ms since the Unix epoch (wall clock)'),
        at: z.number().describe('the same time in job seconds'),
        round: count.nullable(),
        kind: z
          .enum(['start', 'resize', 'move', 'suspend', 'replace-worker', 'done', 'failed'])
          .describe('`move`: the same shape on other servers'),
        from: shapeOrNull,
        to: shapeOrNull,
        preRun: z.boolean(),
        why: z.string(),
      }),
    ),
  })
  .describe("The dashboard's One-job page");
