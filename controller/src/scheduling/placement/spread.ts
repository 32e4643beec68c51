/**
 * Spreading placement, like the Kubernetes default scheduler's LeastAllocated scoring: tasks one
 * at a time, each on the eligible server with the most free room at that moment, so a job's tasks
 * spread across servers. Gang rule kept (a PS job needs all its tasks): if one task finds no
 * server, the job's earlier tasks are rolled back and it waits. Jobs go oldest first.
 */
import type { PlacementRequest, PlacementResult, Placer } from '../core/parts';
import { add, fits, subtract } from '../core/resource-vector';
import type { TaskPlacement } from '../types';
import { byArrival } from '../allocation/minimum-shapes';
import { ServerIndex } from './server-index';
import { TaskListBuilder } from './task-list';
import { shapeWords } from '../words';

export interface SpreadOptions {
  /** Servers visited per task beyond the sound pruning bound (see `ServerIndex.visit`). */
  readonly scanLimit?: number;
}

/** Builds the spreading placer. */
export function spreadPlacer(options: SpreadOptions = {}): Placer {
  const scanLimit = options.scanLimit ?? 512;
  return {
    name: 'spread',
    place({ input, jobs, free }: PlacementRequest): PlacementResult {
      const index = new ServerIndex(input, free);
      const shapeOf = new Map(jobs.map((j) => [j.job.id, j.shape]));
      const placed = new Map<string, readonly TaskPlacement[]>();
      const unplaced = new Map<string, string>();
      for (const job of byArrival(jobs.map((j) => j.job))) {
        const shape = shapeOf.get(job.id);
        if (!shape) continue;
        const roles = [...Array<'ps'>(shape.ps).fill('ps'), ...Array<'worker'>(shape.workers).fill('worker')];
        const taken: { server: number; demand: Float64Array }[] = [];
        const tasks = new TaskListBuilder();
        for (const role of roles) {
          const demand = role === 'ps' ? job.ps : job.worker;
          let server = -1;
          index.visit(demand, { smallest: demand, largest: demand }, scanLimit, (s) => {
            const f = free[s];
            if (f === undefined || !fits(f, demand)) return false;
            server = s;
            return true;
          });
          if (server < 0) break;
          const f = free[server];
          if (f) subtract(f, demand);
          index.update(server);
          taken.push({ server, demand });
          tasks.add(role, input.servers[server]?.name ?? '');
        }
        if (taken.length === roles.length) {
          placed.set(job.id, tasks.build());
          continue;
        }
        for (const t of taken) {
          const f = free[t.server];
          if (f) add(f, t.demand);
          index.update(t.server);
        }
        unplaced.set(job.id, `no server can hold every task of ${shapeWords(shape.ps, shape.workers)}`);
      }
      return { placed, unplaced };
    },
  };
}
