/**
 * The Cluster page: every server with the tasks placed on it (which job, which role) and what
 * they hold, and the cluster's utilisation per resource. Pure.
 */
import type { Resources } from '../../../shared/src/units';
import type { ObservedRecord } from '../runtime/job-entry';
import type { ServerSnapshot, TaskRole } from '../scheduling/types';
import { jobSeconds, type JobClock } from './format';
import type { UtilisationPoint } from './history';

export interface PlacedTask {
  readonly job: string;
  readonly role: TaskRole;
  readonly index: number;
  /** True while the job is in its pre-run (the task runs a speed sample). */
  readonly preRun: boolean;
}

export interface ServerView {
  readonly name: string;
  readonly capacity: Resources;
  /** Held by things this scheduler does not manage (other pods, system reserve). */
  readonly reserved: Resources;
  /** Held by our jobs' tasks. */
  readonly used: Resources;
  readonly tasks: readonly PlacedTask[];
}

export interface ClusterView {
  readonly resources: readonly string[];
  readonly servers: readonly ServerView[];
  /** Sums over servers. */
  readonly capacity: Resources;
  readonly used: Resources;
  readonly reserved: Resources;
  /** Utilisation over time; `at` is job seconds (the clock every screen shows), `t` wall ms. */
  readonly utilisation: readonly (UtilisationPoint & { readonly at: number })[];
  /** Job seconds now: the last utilisation point holds until then. */
  readonly elapsedSec: number | null;
}

export function clusterView(
  servers: readonly ServerSnapshot[],
  records: readonly ObservedRecord[],
  utilisation: readonly UtilisationPoint[],
  clock?: JobClock,
): ClusterView {
  const byServer = new Map<string, { used: Record<string, number>; tasks: PlacedTask[] }>();
  for (const s of servers) byServer.set(s.name, { used: {}, tasks: [] });
  for (const r of records) {
    if (!r.current) continue;
    const job = `${r.spec.namespace}/${r.spec.name}`;
    for (const p of r.current.placement) {
      const slot = byServer.get(p.server);
      if (!slot) continue; // a server that left the cluster; its tasks are gone with it
      add(slot.used, p.role === 'ps' ? r.spec.psDemand : r.spec.workerDemand);
      slot.tasks.push({ job, role: p.role, index: p.index, preRun: r.phase === 'pre-run' });
    }
  }
  const views: ServerView[] = servers.map((s) => ({
    name: s.name,
    capacity: s.capacity,
    reserved: s.reserved,
    used: byServer.get(s.name)?.used ?? {},
    tasks: sortTasks(byServer.get(s.name)?.tasks ?? []),
  }));
  const capacity: Record<string, number> = {};
  const used: Record<string, number> = {};
  const reserved: Record<string, number> = {};
  for (const v of views) {
    add(capacity, v.capacity);
    add(used, v.used);
    add(reserved, v.reserved);
  }
  return {
    resources: Object.keys(capacity).sort(resourceOrder),
    servers: views,
    capacity,
    used,
    reserved,
    utilisation: utilisation.map((p) => ({ ...p, at: clock ? jobSeconds(clock, p.t) : p.t / 1000 })),
    elapsedSec: clock ? Math.round(clock.now() * 10) / 10 : null,
  };
}

/** One utilisation sample: our tasks plus others' reservations, over capacity (per resource). */
export function utilisationPoint(
  t: number,
  view: Pick<ClusterView, 'capacity' | 'used' | 'reserved'>,
): UtilisationPoint {
  const used: Record<string, number> = {};
  add(used, view.used);
  add(used, view.reserved);
  return { t, used, capacity: { ...view.capacity } };
}

function add(into: Record<string, number>, r: Resources): void {
  for (const [k, v] of Object.entries(r)) into[k] = (into[k] ?? 0) + v;
}

const sortTasks = (tasks: PlacedTask[]): PlacedTask[] =>
  tasks.sort((a, b) => a.job.localeCompare(b.job) || a.role.localeCompare(b.role) || a.index - b.index);

/** cpu, memory, then the rest (GPUs…) alphabetically. */
function resourceOrder(a: string, b: string): number {
  const rank = (k: string) => (k === 'cpu' ? 0 : k === 'memory' ? 1 : 2);
  return rank(a) - rank(b) || a.localeCompare(b);
}
