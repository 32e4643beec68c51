/**
 * Tetris placement (Grandl et al., SIGCOMM 2014, §3.2): each task goes to the server with the
 * highest alignment score — the dot product of the task's demand and the server's free resources,
 * both normalised by the largest server's capacity — among servers that fit it. Jobs go shortest
 * remaining time first (the SRTF term of Tetris's score). Gang rule kept: a job whose tasks do not
 * all fit waits and its tasks are rolled back. Scans every server per task: O(tasks × servers),
 * meant for simulator-sized clusters, not the 16,000-server benchmark.
 */
import { shortestFirst } from '../allocation/tetris';
import type { PlacementRequest, PlacementResult, Placer } from '../core/parts';
import { add, fits, subtract } from '../core/resource-vector';
import type { TaskPlacement } from '../types';
import { TaskListBuilder } from './task-list';
import { shapeWords } from '../words';

export function alignmentPlacer(): Placer {
  return {
    name: 'alignment',
    place({ input, jobs, free }: PlacementRequest): PlacementResult {
      const scale = new Float64Array(input.space.names.length);
      for (const s of input.servers) {
        for (let r = 0; r < scale.length; r++) scale[r] = Math.max(scale[r] ?? 0, s.allocatable[r] ?? 0);
      }
      const best = (demand: Float64Array): number => {
        let chosen = -1;
        let top = -Infinity;
        for (let s = 0; s < free.length; s++) {
          const f = free[s];
          if (!f || !fits(f, demand)) continue;
          let score = 0;
          for (let r = 0; r < input.space.real; r++)
            score += ((demand[r] ?? 0) * (f[r] ?? 0)) / ((scale[r] ?? 0) || 1) ** 2;
          if (score > top) {
            top = score;
            chosen = s;
          }
        }
        return chosen;
      };
      const shapeOf = new Map(jobs.map((j) => [j.job.id, j.shape]));
      const placed = new Map<string, readonly TaskPlacement[]>();
      const unplaced = new Map<string, string>();
      for (const job of shortestFirst(jobs.map((j) => j.job))) {
        const shape = shapeOf.get(job.id);
        if (!shape) continue;
        const roles = [...Array<'ps'>(shape.ps).fill('ps'), ...Array<'worker'>(shape.workers).fill('worker')];
        const tasks = new TaskListBuilder();
        const taken: { s: number; d: Float64Array }[] = [];
        for (const role of roles) {
          const d = role === 'ps' ? job.ps : job.worker;
          const s = best(d);
          if (s < 0) break;
          subtract(free[s] ?? new Float64Array(), d);
          taken.push({ s, d });
          tasks.add(role, input.servers[s]?.name ?? '');
        }
        if (taken.length === roles.length) placed.set(job.id, tasks.build());
        else {
          for (const t of taken) add(free[t.s] ?? new Float64Array(), t.d);
          unplaced.set(job.id, `no server can hold every task of ${shapeWords(shape.ps, shape.workers)}`);
        }
      }
      return { placed, unplaced };
    },
  };
}
