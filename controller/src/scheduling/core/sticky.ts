/**
 * Churn avoidance in placement: a running job whose shape did not change keeps its servers when
 * they still hold it, so a round does not move tasks for nothing. Runs before the placer.
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
): Map<string, readonly TaskPlacement[]> {
  const kept = new Map<string, readonly TaskPlacement[]>();
  for (const { job, shape } of jobs) {
    const current = job.snapshot.current;
    if (!current || !sameShape(current.shape, shape) || !complete(current.placement, shape)) continue;
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
