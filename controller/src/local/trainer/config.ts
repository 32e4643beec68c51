/** The emulated trainer's configuration, passed as JSON in `OPTIMUS_TRAINER_CONFIG`. */
import { z } from 'zod';

export const trainerConfigSchema = z
  .object({
    role: z.enum(['ps', 'worker']),
    index: z.number().int().min(0),
    ps: z.number().int().min(1),
    workers: z.number().int().min(1),
    mode: z.enum(['sync', 'async']),
    batchSize: z.number().int().positive(),
    stepsPerEpoch: z.number().int().positive(),
    theta: z.array(z.number().min(0)),
    beta: z.tuple([z.number(), z.number(), z.number()]),
    lossNoise: z.number().min(0),
    speedNoise: z.number().min(0),
    threshold: z.number().positive(),
    patience: z.number().int().positive(),
    maxEpochs: z.number().int().positive(),
    /** Job seconds per wall second. */
    timeScale: z.number().positive(),
    /** Job seconds spent loading the checkpoint and joining ps-lite before the first batch. */
    restartCostSec: z.number().min(0),
    /** Speedometer period in batches (MXNet's `frequent`). */
    frequent: z.number().int().positive(),
    logPath: z.string(),
    checkpointPath: z.string(),
    /** The worker's sidecar done marker: touched when the trainer stops because its controller died. */
    doneMarker: z.string().nullable(),
    /**
     * The controller's pid. The trainer stops once its parent is another process (it was orphaned):
     * compared with this rather than with the parent seen at start, which is already init when the
     * controller died while this process was still loading.
     */
    parentPid: z.number().int().positive().optional(),
    seed: z.number().int(),
    /**
     * A start fault to emulate (tests of the runtime's failure handling): `crash` exits before it
     * runs, `hang` runs but never reports that it does.
     */
    fault: z.enum(['crash', 'hang']).nullable().default(null),
  })
  .strict();
export type TrainerConfig = z.infer<typeof trainerConfigSchema>;
