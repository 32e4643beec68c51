/**
 * Churn avoidance in placement: a running job whose shape did not change keeps its servers when
 * they still hold it, so a round does not move tasks for nothing. Runs before the placer.
 *
 * With `shrinks` (Optimus), a job that runs smaller than before keeps the tasks that remain
 * (lowest indexes) where they are. Such a job held more on these servers a moment ago, so the
 * subset fits unless a job kept earlier took the room; placed afresh instead, it came after
 * the newcomers and the placer often had to shrink it far below its allocation (7 PS + 3
 * workers allocated 4 + 2, run as 1 + 1 on the paper workload).
 */
import type { JobShape, TaskPlacement } from '../types';
import type { PlacementJob } from './parts';
import type { PreparedInput } from './prepare';
import { add, fits, subtract } from './resource-vector';

/** Places what can stay where it is (consuming `free`); returns those placements. */
export function keepCurrentPlacements(
  input: PreparedInput,
  jobs: readonly PlacementJob[],
  free: Float64Array[],
  options: { readonly shrinks?: boolean } = {},
): Map<string, readonly TaskPlacement[]> {
  const kept = new Map<string, readonly TaskPlacement[]>();
  for (const { job, shape } of jobs) {
    const now = job.snapshot.current;
    if (!now || !complete(now.placement, now.shape)) continue;
    const current = sameShape(now.shape, shape)
      ? now
      : options.shrinks
        ? remainingTasks(now.placement, now.shape, shape)
        : null;
    if (!current) continue;
    const servers: number[] = [];
    for (const t of current.placement) {
      const s = input.serverIndex.get(t.server);
      if (s === undefined) break;
      servers.push(s);
    }
    if (servers.length !== current.placement.length) continue;
    let ok = true;
    const taken: { s: number; d: Float64Array }[] = [];
    current.placement.forEach((t, i) => {
      const s = servers[i] ?? -1;
      const f = free[s];
      const d = t.role === 'ps' ? job.ps : job.worker;
      if (!ok || !f || !fits(f, d)) {
        ok = false;
        return;
      }
      subtract(f, d);
      taken.push({ s, d });
    });
    if (ok) kept.set(job.id, current.placement);
    else for (const { s, d } of taken) add(free[s] ?? new Float64Array(), d);
  }
  return kept;
}

export function sameShape(a: JobShape, b: JobShape): boolean {
  return a.ps === b.ps && a.workers === b.workers;
}

/** Exactly PS 0..p-1 and workers 0..w-1, each once. */
function complete(placement: readonly TaskPlacement[], shape: JobShape): boolean {
  if (placement.length !== shape.ps + shape.workers) return false;
  const seen = new Set<string>();
  for (const t of placement) {
    const limit = t.role === 'ps' ? shape.ps : shape.workers;
    if (!Number.isInteger(t.index) || t.index < 0 || t.index >= limit) return false;
    seen.add(`${t.role}:${t.index}`);
  }
  return seen.size === placement.length;
}

/** The tasks a shrink from `from` to `to` keeps (lowest indexes); null unless it is a shrink. */
function remainingTasks(
  placement: readonly TaskPlacement[],
  from: JobShape,
  to: JobShape,
): { placement: readonly TaskPlacement[] } | null {
  if (to.ps > from.ps || to.workers > from.workers) return null;
  return { placement: placement.filter((t) => t.index < (t.role === 'ps' ? to.ps : to.workers)) };
}
