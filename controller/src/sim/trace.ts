/**
 * The JSON trace format (documented in docs/trace-format.md): a cluster and a list of jobs with their
 * hidden ground truth, so a workload can be replayed here or by another simulator.
 * Types are derived from the schema; `parseTrace` validates every field with a clear message.
 */
import { z } from 'zod';

const finite = z.number().finite();
const positive = finite.gt(0);
const nonNegative = finite.min(0);
const resources = z.record(z.string().min(1), nonNegative);

/** How a measured model's speed is read between and beyond its measured shapes. */
export const MEASURED_INTERPOLATIONS = ['table', 'table+rbf', 'rbf'] as const;
export type MeasuredInterpolation = (typeof MEASURED_INTERPOLATIONS)[number];

/** Ground-truth loss per epoch `e` (fractional: e = step / stepsPerEpoch). */
export const lossCurveSchema = z.discriminatedUnion('kind', [
  /** The paper's form l(e) = 1/(β0·e + β1) + β2. */
  z.object({ kind: z.literal('inverse'), beta0: positive, beta1: positive, beta2: nonNegative }).strict(),
  /** Inverse curve with a learning-rate drop at `dropEpoch` that removes `dropFraction` of the excess loss. */
  z
    .object({
      kind: z.literal('lr-drop'),
      beta0: positive,
      beta1: positive,
      beta2: nonNegative,
      dropEpoch: positive,
      dropFraction: finite.min(0).max(0.95),
    })
    .strict(),
  /** A slow start (warm-up plateau of `plateauEpochs` losing 1%/epoch), then the inverse curve. */
  z
    .object({
      kind: z.literal('plateau'),
      beta0: positive,
      beta1: positive,
      beta2: nonNegative,
      plateauEpochs: positive,
    })
    .strict(),
  /** Not 1/k: l(e) = a·exp(−e/τ) + c. */
  z.object({ kind: z.literal('exponential'), a: positive, tau: positive, c: nonNegative }).strict(),
]);
export type LossCurve = z.infer<typeof lossCurveSchema>;

export const workSchema = z.discriminatedUnion('kind', [
  /** The job runs until the convergence rule holds on its (noise-free) loss curve. */
  z
    .object({
      kind: z.literal('loss-curve'),
      curve: lossCurveSchema,
      /** δ: per-epoch decrease of normalised loss. */
      threshold: finite.gt(0).lt(1),
      /** K: consecutive epochs below δ. */
      patience: z.number().int().min(1),
      /** Relative standard deviation of the loss the sidecar reports. */
      noise: finite.min(0).max(0.5),
    })
    .strict(),
  /** A fixed amount of work (other simulators' traces); the scheduler still sees a loss curve. */
  z.object({ kind: z.literal('steps'), steps: positive }).strict(),
  z.object({ kind: z.literal('epochs'), epochs: positive }).strict(),
]);
export type Work = z.infer<typeof workSchema>;

export const speedTruthSchema = z.discriminatedUnion('kind', [
  /**
   * From `test/data/measured-speeds.csv` for this model (sync; async derived, see ADR 0002), by
   * `interpolation`: `table` (default) interpolates between measured shapes and beyond the
   * largest gives the speed there; `table+rbf` the same inside, DL2's extrapolation beyond;
   * `rbf` DL2's own speed function everywhere (`measured-rbf.ts`; ADR 0028).
   */
  z
    .object({
      kind: z.literal('measured'),
      model: z.string().min(1),
      interpolation: z.enum(MEASURED_INTERPOLATIONS).optional(),
    })
    .strict(),
  /** Eq. 3/4 with these θ (sync: 5 values θ0..θ4, async: 4 values θ0..θ3). */
  z.object({ kind: z.literal('parametric'), theta: z.array(nonNegative).min(4).max(5) }).strict(),
]);
export type SpeedTruth = z.infer<typeof speedTruthSchema>;

export const traceJobSchema = z
  .object({
    id: z.string().min(1),
    /** Seconds after the trace start. */
    arrival: nonNegative,
    type: z.string().min(1),
    mode: z.enum(['sync', 'async']),
    psDemand: resources,
    workerDemand: resources,
    minPs: z.number().int().min(1),
    maxPs: z.number().int().min(1),
    minWorkers: z.number().int().min(1),
    maxWorkers: z.number().int().min(1),
    /** Samples per global step (sync) or per worker step (async). */
    globalBatch: positive,
    stepsPerEpoch: z.number().int().min(1),
    speed: speedTruthSchema,
    work: workSchema,
    /**
     * Optional: the model's parameter blocks (one per kvstore key, size in parameters) for the
     * PS load-balance truth (`parameter-blocks.ts`); without them assignment has no effect.
     */
    parameterBlocks: z
      .array(z.object({ name: z.string().min(1), size: z.number().int().min(1) }).strict())
      .min(1)
      .optional(),
  })
  .strict()
  .refine((j) => j.minPs <= j.maxPs && j.minWorkers <= j.maxWorkers, {
    message: 'minPs/minWorkers must not exceed maxPs/maxWorkers',
  });
export type TraceJob = z.infer<typeof traceJobSchema>;

export const traceServerSchema = z.object({ name: z.string().min(1), capacity: resources }).strict();
export type TraceServer = z.infer<typeof traceServerSchema>;

/** A server running slow for a while: workers on it straggle (`straggler-truth.ts`). */
export const slowdownSchema = z
  .object({
    server: z.string().min(1),
    from: nonNegative,
    to: nonNegative.optional(),
    factor: finite.min(1),
  })
  .strict()
  .refine((s) => s.to === undefined || s.to > s.from, { message: 'to must be after from' });

export const traceSchema = z
  .object({
    format: z.literal('optimus-trace'),
    version: z.literal(1),
    name: z.string().min(1),
    seed: z.number().int(),
    cluster: z
      .object({
        servers: z.array(traceServerSchema).min(1),
        /** Optional: slow periods of servers (stragglers appear and disappear). */
        slowdowns: z.array(slowdownSchema).optional(),
      })
      .strict(),
    jobs: z.array(traceJobSchema),
  })
  .strict()
  .superRefine((t, ctx) => {
    const ids = new Set<string>();
    for (const j of t.jobs) {
      if (ids.has(j.id)) ctx.addIssue({ code: 'custom', message: `duplicate job id "${j.id}"` });
      ids.add(j.id);
    }
    const names = new Set(t.cluster.servers.map((s) => s.name));
    for (const [i, s] of (t.cluster.slowdowns ?? []).entries()) {
      if (!names.has(s.server)) {
        ctx.addIssue({
          code: 'custom',
          path: ['cluster', 'slowdowns', i, 'server'],
          message: `unknown server "${s.server}"`,
        });
      }
    }
  });
export type Trace = z.infer<typeof traceSchema>;

/** Validates an already-parsed JSON value as a trace; throws an Error listing the offending paths. */
export function parseTrace(value: unknown): Trace {
  const r = traceSchema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new Error(`invalid trace: ${issues.join('; ')}`);
}

/** Serialises a trace as stable, human-readable JSON. */
export function serializeTrace(trace: Trace): string {
  return `${JSON.stringify(trace, null, 2)}\n`;
}
