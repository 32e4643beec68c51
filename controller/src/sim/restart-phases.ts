/**
 * How long each step of a rollout takes in the simulator — named assumptions, in one table, until
 * measurements of real trainers replace them (issue 26: someone measures PyTorch trainers' restart
 * phases; swap `ASSUMED` for their table, or give a model its own row).
 *
 * The four phases are the ones the runtime measures on every backend (`runtime/rollout/
 * restart-cost.ts`): SIGTERM → checkpoint written → old tasks gone → new tasks running → first step.
 * Their sum, 30 s, is the restart pause the simulator charged as one constant before (and the
 * runtime's prior): the figures stay comparable, only now the time is spent where a cluster spends
 * it, and the resources are held meanwhile.
 */

export interface RestartPhases {
  /** SIGTERM → the checkpoint is on disk (the trainer saves its parameters and optimizer state). */
  readonly checkpointSec: number;
  /** Checkpoint written → the task is gone (the process exits; the kubelet reports it and frees it). */
  readonly terminationSec: number;
  /** A new task created → running (bound to its node, the image already there, the container up). */
  readonly podStartSec: number;
  /** Running → the first step (framework start, checkpoint restored, ps-lite joined, first batch). */
  readonly firstStepSec: number;
}

/**
 * The assumptions. Why these figures: a ResNet-50-sized checkpoint (~100 MB of parameters plus
 * optimizer state) written to a network volume in a few seconds; a process that exits and a kubelet
 * that reports it within ~2 s; a pod with its image cached starts in ~8 s; a PS job's first step
 * after a restart (import, restore, ps-lite rendezvous, first batch) takes the longest, ~15 s.
 */
export const ASSUMED: RestartPhases = {
  checkpointSec: 5,
  terminationSec: 2,
  podStartSec: 8,
  firstStepSec: 15,
};

/**
 * Per declared model, how much longer (or shorter) its checkpoint and restore take than the
 * assumption's (roughly its checkpoint size against ResNet-50's). Empty: every model as assumed.
 * A factor scales the phases that move the checkpoint (saving it, restoring it in the first step).
 */
export const MODEL_SCALE: Readonly<Record<string, number>> = {};

/** Seconds from SIGTERM to the first step. */
export const totalSec = (p: RestartPhases): number =>
  p.checkpointSec + p.terminationSec + p.podStartSec + p.firstStepSec;

/** The phases of a job of `model` (its row of {@link MODEL_SCALE}, else the assumption). */
export function phasesFor(
  model: string | undefined,
  base: RestartPhases = ASSUMED,
  scale: Readonly<Record<string, number>> = MODEL_SCALE,
): RestartPhases {
  const f = model === undefined ? 1 : (scale[model] ?? 1);
  return f === 1
    ? base
    : { ...base, checkpointSec: base.checkpointSec * f, firstStepSec: base.firstStepSec * f };
}

/**
 * The same proportions at another total (`simulate --restart-pause s`): 0 makes every rollout
 * instant, as the old constant pause of 0 did.
 */
export function scaledTo(totalSeconds: number, base: RestartPhases = ASSUMED): RestartPhases {
  const t = totalSec(base);
  const f = t > 0 ? Math.max(0, totalSeconds) / t : 0;
  return {
    checkpointSec: base.checkpointSec * f,
    terminationSec: base.terminationSec * f,
    podStartSec: base.podStartSec * f,
    firstStepSec: base.firstStepSec * f,
  };
}
