/**
 * Plan = diff(current, decided), as data (the only input an executor needs). Pure.
 *
 * Per job of the decision:
 * - run, holds nothing            → start
 * - run, shape changed, or any task other than a replaced straggler moved → resize
 *   (checkpoint, stop, restart: ps-lite membership is static, paper §1)
 * - run, same shape and tasks     → one replace-worker per straggler the policy asked to replace
 * - wait, holds something         → suspend
 * - wait, holds nothing           → nothing
 * Jobs in `current` but absent from the decision are left alone: the caller removes finished
 * jobs itself, and a policy never silently drops a job.
 * Actions come in decision order, with suspends first so that their resources are free before
 * starts and resizes need them.
 */
import type { Decision, JobShape, TaskPlacement } from '../scheduling/types';
import type { Plan, PlanAction } from './types';

/** What a job holds now; null (or absent) when it holds nothing. */
export interface CurrentJob {
  readonly shape: JobShape;
  readonly placement: readonly TaskPlacement[];
}

export function planChanges(current: ReadonlyMap<string, CurrentJob | null>, decision: Decision): Plan {
  const suspends: PlanAction[] = [];
  const others: PlanAction[] = [];
  for (const d of decision.jobs) {
    const now = current.get(d.jobId) ?? null;
    if (d.action === 'wait') {
      if (now) suspends.push({ kind: 'suspend', jobId: d.jobId, reason: d.reason });
      continue;
    }
    if (!now) {
      others.push({ kind: 'start', jobId: d.jobId, shape: d.shape, placement: d.placement });
      continue;
    }
    const replaced = new Set(d.replaceWorkers);
    const sameShape = now.shape.ps === d.shape.ps && now.shape.workers === d.shape.workers;
    if (!sameShape || !samePlacement(now.placement, d.placement, replaced)) {
      others.push({
        kind: 'resize',
        jobId: d.jobId,
        from: now.shape,
        shape: d.shape,
        placement: d.placement,
      });
      continue;
    }
    for (const index of [...replaced].sort((a, b) => a - b)) {
      const task = d.placement.find((t) => t.role === 'worker' && t.index === index);
      if (task) others.push({ kind: 'replace-worker', jobId: d.jobId, index, server: task.server });
    }
  }
  return { actions: [...suspends, ...others] };
}

const key = (t: TaskPlacement) => `${t.role}:${t.index}`;

/** Same task → server map, ignoring workers that are being replaced anyway. */
function samePlacement(
  a: readonly TaskPlacement[],
  b: readonly TaskPlacement[],
  replaced: ReadonlySet<number>,
): boolean {
  if (a.length !== b.length) return false;
  const where = new Map(a.map((t) => [key(t), t.server]));
  if (where.size !== a.length) return false;
  for (const t of b) {
    const server = where.get(key(t));
    if (server === undefined) return false;
    if (server !== t.server && !(t.role === 'worker' && replaced.has(t.index))) return false;
  }
  return true;
}
