/** Kubernetes-style conditions on the job's status. Pure; time comes in as a value. */
import type { JobCondition } from './optimus-job';

export const CONDITION = {
  /** All pods of the current shape run. */
  Running: 'Running',
  /** The last rollout could not start (unschedulable, image error, timeout). */
  RolloutFailed: 'RolloutFailed',
  /** The last stop was confirmed by a checkpoint line. */
  Checkpointed: 'Checkpointed',
  /** The controller's own check refused the job: reason `InvalidSpec`, or `InvalidName` (phase `Failed`). */
  Invalid: 'Invalid',
  Complete: 'Complete',
} as const;

/** Sets (or replaces) the condition of `c.type`; keeps `lastTransitionTime` when the status did not flip. */
export function setCondition(
  list: readonly JobCondition[] | undefined,
  c: JobCondition,
  nowIso: string,
): JobCondition[] {
  const old = (list ?? []).find((x) => x.type === c.type);
  const lastTransitionTime =
    old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : nowIso;
  return [...(list ?? []).filter((x) => x.type !== c.type), { ...c, lastTransitionTime }];
}
