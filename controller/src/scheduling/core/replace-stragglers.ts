/**
 * Turns detected stragglers into a new placement: each straggling worker moves to the eligible
 * server with the most free room other than its own (a slow server is the usual cause); if no
 * other server has room it restarts where it was.
 */
import { detectStragglers, type StragglerOptions } from '../stragglers';
import type { TaskPlacement } from '../types';
import type { PreparedInput, PreparedJob } from './prepare';
import { add, fits, subtract } from './resource-vector';

export function replaceStragglers(
  input: PreparedInput,
  job: PreparedJob,
  placement: readonly TaskPlacement[],
  free: Float64Array[],
  options: StragglerOptions,
): { placement: readonly TaskPlacement[]; replaceWorkers: number[] } {
  const slow = [
    ...new Set([
      ...detectStragglers(job.snapshot.mode, job.snapshot.workerStepTimes, options),
      ...(job.snapshot.lostWorkers ?? []),
    ]),
  ].sort((a, b) => a - b);
  const workers = placement.filter((t) => t.role === 'worker').length;
  const replaceWorkers = slow.filter((i) => i < workers);
  if (replaceWorkers.length === 0) return { placement, replaceWorkers };
  const next = placement.map((t) => ({ ...t }));
  for (const i of replaceWorkers) {
    const task = next.find((t) => t.role === 'worker' && t.index === i);
    if (!task) continue;
    const from = input.serverIndex.get(task.server);
    const to = roomiest(input, free, job.worker, from);
    if (to === undefined || from === undefined) continue;
    subtract(free[to] ?? new Float64Array(), job.worker);
    add(free[from] ?? new Float64Array(), job.worker);
    task.server = input.servers[to]?.name ?? task.server;
  }
  return { placement: next, replaceWorkers };
}

function roomiest(
  input: PreparedInput,
  free: Float64Array[],
  demand: Float64Array,
  exclude: number | undefined,
): number | undefined {
  let best: number | undefined;
  let bestScore = -Infinity;
  for (const s of input.servers) {
    const f = free[s.index];
    if (s.index === exclude || !f || !fits(f, demand)) continue;
    let score = 0;
    for (let r = 0; r < input.space.real; r++) score += (f[r] ?? 0) / ((input.total[r] ?? 0) || 1);
    if (score > bestScore) {
      bestScore = score;
      best = s.index;
    }
  }
  return best;
}
