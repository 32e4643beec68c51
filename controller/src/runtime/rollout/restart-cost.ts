/**
 * What a restart costs, measured per rollout (issue 26, ADR 0035): SIGTERM sent → the checkpoint
 * written (the sidecar's checkpoint record) → the old tasks gone → the new tasks running → the first
 * step (the first new progress record). Kept with the job's record: the last rollout's times and a
 * running median of what its restarts cost, which the policy's restart-aware time uses once there is
 * one (the prior until then). Pure; times come in (wall ms).
 */
import type { MetricsRecord } from '../../../../shared/src/schemas';

/** The moments of one rollout, wall ms; null until seen. */
export interface RolloutTimes {
  readonly generation: number;
  /** The rollout stops a set that ran and resumes it from its checkpoint. */
  readonly restart: boolean;
  /** The round wrote the target. */
  readonly writtenAtMs: number;
  /** The executor asked the old tasks to stop (SIGTERM, with the checkpoint grace). */
  sigtermAtMs: number | null;
  /** The job's checkpoint record (its `ts`: when the sidecar read the line). */
  checkpointAtMs: number | null;
  /** The first observation with nothing of the old set left. */
  goneAtMs: number | null;
  /** The first observation with every task of the target running (the target reached). */
  runningAtMs: number | null;
  /** The first progress record of the new tasks. */
  firstStepAtMs: number | null;
}

/** What the job's restarts cost so far. */
export interface RestartCosts {
  /** The latest rollout (a restart or not). */
  readonly last: RolloutTimes | null;
  /** Job seconds from SIGTERM to the first step of each measured restart, newest last (bounded). */
  readonly samples: readonly number[];
}

/** Restarts a median is taken over (the newest): a job whose checkpoint grew is measured as it is now. */
export const MAX_SAMPLES = 9;

export const newRollout = (generation: number, restart: boolean, atMs: number): RolloutTimes => ({
  generation,
  restart,
  writtenAtMs: atMs,
  sigtermAtMs: null,
  checkpointAtMs: null,
  goneAtMs: null,
  runningAtMs: null,
  firstStepAtMs: null,
});

/** The median of the samples, or null without any. */
export function medianCost(c: RestartCosts | undefined): number | null {
  const s = [...(c?.samples ?? [])].sort((a, b) => a - b);
  if (s.length === 0) return null;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * A record of the job arrived: its checkpoint, or the first progress record once the old set is
 * gone (from the new tasks: the old ones cannot log any more). Returns the restart's cost in job
 * seconds once it is complete (the first step seen), else null.
 */
export function noteRecord(t: RolloutTimes, r: MetricsRecord, scale: number): number | null {
  if (r.kind === 'checkpoint') {
    if (t.sigtermAtMs !== null && t.checkpointAtMs === null && r.ts >= t.sigtermAtMs) t.checkpointAtMs = r.ts;
    return null;
  }
  if (r.kind === 'validation' || t.firstStepAtMs !== null) return null;
  const after = t.goneAtMs ?? (t.restart ? null : t.writtenAtMs);
  if (after === null || r.ts < after) return null;
  t.firstStepAtMs = r.ts;
  return t.restart && t.sigtermAtMs !== null ? costSec(t, scale) : null;
}

/** Job seconds from SIGTERM to the first step. */
export const costSec = (t: RolloutTimes, scale: number): number =>
  Math.round((((t.firstStepAtMs ?? 0) - (t.sigtermAtMs ?? 0)) / 1000) * scale * 1000) / 1000;

/** Adds one measured restart. */
export function withSample(c: RestartCosts | undefined, last: RolloutTimes, sec: number): RestartCosts {
  return { last, samples: [...(c?.samples ?? []), sec].slice(-MAX_SAMPLES) };
}

/** The API's view of a job's restart cost: the phases of the last rollout (s) and the median. */
export function restartCostView(
  c: RestartCosts | undefined,
  prior: number,
  scale: number,
): Record<string, unknown> {
  const t = c?.last ?? null;
  const sec = (from: number | null | undefined, to: number | null | undefined): number | null =>
    from === null || from === undefined || to === null || to === undefined
      ? null
      : Math.round(((to - from) / 1000) * scale * 1000) / 1000;
  const median = medianCost(c);
  return {
    priorSec: prior,
    medianSec: median,
    usedSec: median ?? prior,
    samples: c?.samples.length ?? 0,
    last: t && {
      generation: t.generation,
      restart: t.restart,
      sigtermToCheckpointSec: sec(t.sigtermAtMs, t.checkpointAtMs),
      sigtermToGoneSec: sec(t.sigtermAtMs, t.goneAtMs),
      goneToRunningSec: sec(t.goneAtMs ?? t.writtenAtMs, t.runningAtMs),
      runningToFirstStepSec: sec(t.runningAtMs, t.firstStepAtMs),
      totalSec: t.restart ? sec(t.sigtermAtMs, t.firstStepAtMs) : null,
      writtenToRunningSec: sec(t.writtenAtMs, t.runningAtMs),
    },
  };
}
