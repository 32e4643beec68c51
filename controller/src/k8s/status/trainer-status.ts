/**
 * A job's progress in the shape of Kubeflow Trainer's `status.trainerStatus` (KEP-2779:
 * `progressPercentage`, `estimatedRemainingSeconds`, `lastUpdatedTime`), plus the human ETA the
 * `kubectl get optimusjobs` column shows. Pure: the time of the write comes in.
 */
import type { TrainerStatus } from '../api/optimus-job';

/** `1h05m`, `12m`, `45s`, `3d4h`: the ETA column (kubectl cannot print a duration from seconds). */
export function formatEta(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d${h}h`;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m`;
  return `${s}s`;
}

/** RFC 3339 without fractions: a metav1.Time. */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

export interface TrainerStatusInput {
  /** 0..1, or undefined when unknown. */
  readonly progress?: number;
  /** Epoch seconds of the predicted completion; null: none (unknown, or the job ended). */
  readonly predictedCompletionSec?: number | null;
  /** The job ended successfully: 100 % and no time left. */
  readonly finished?: boolean;
  readonly nowMs: number;
}

/** The trainerStatus to store and the ETA text (null: remove the column's value). */
export function trainerStatusOf(i: TrainerStatusInput): { trainerStatus: TrainerStatus; eta: string | null } {
  const percent =
    i.finished === true
      ? 100
      : i.progress !== undefined
        ? Math.round(Math.min(1, Math.max(0, i.progress)) * 100)
        : undefined;
  const remaining =
    i.finished === true
      ? 0
      : typeof i.predictedCompletionSec === 'number'
        ? Math.max(0, Math.round(i.predictedCompletionSec - i.nowMs / 1000))
        : undefined;
  return {
    trainerStatus: {
      ...(percent !== undefined ? { progressPercentage: percent } : {}),
      ...(remaining !== undefined ? { estimatedRemainingSeconds: remaining } : {}),
      lastUpdatedTime: rfc3339(i.nowMs),
    },
    eta: remaining === undefined || i.finished === true ? null : formatEta(remaining),
  };
}
