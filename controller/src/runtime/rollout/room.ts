/**
 * Room for a job's new tasks, from one observation: what every server has, less what others (not
 * our jobs) reserve, less what each of our jobs holds — the worse of what it runs and, while in
 * flight, of what its target will run — so two rollouts never count on the same room, and a set
 * starts only once the set it replaces (its own or another job's) is gone. Pure.
 */
import type { Resources } from '../../../../shared/src/units';
import type { Observation } from '../observed';
import type { JobEntry } from '../job-entry';
import { jobIdOf } from '../job-spec';
import { heldBy, maxUsage, usageOf } from '../observation';
import { isInFlight } from './in-flight';
import type { TargetTask } from './target';

type Usage = Map<string, Record<string, number>>;

function add(into: Usage, from: ReadonlyMap<string, Resources>, sign: 1 | -1): void {
  for (const [server, u] of from) {
    const o = into.get(server) ?? {};
    for (const [k, v] of Object.entries(u)) o[k] = (o[k] ?? 0) + sign * v;
    into.set(server, o);
  }
}

/** What one job counts as holding: its observed tasks, and its target's while in flight. */
function holding(e: JobEntry, observation: Observation): ReadonlyMap<string, Resources> {
  const observed = heldBy(e.rec.spec, observation.jobs.get(jobIdOf(e.rec.spec)));
  const t = e.rec.target;
  return t && isInFlight(e) ? maxUsage(observed as Usage, usageOf(e.rec.spec, t.tasks)) : observed;
}

/**
 * `room(e)(tasks)`: true when `tasks` of job `e` fit now. Built once per observation; each call
 * costs the job's own tasks only.
 */
export function roomFor(
  observation: Observation,
  entries: Iterable<JobEntry>,
): (e: JobEntry) => (tasks: readonly TargetTask[]) => boolean {
  const used: Usage = new Map();
  for (const e of entries) add(used, holding(e, observation), 1);
  const servers = new Map(observation.servers.map((s) => [s.name, s]));
  return (e) => (tasks) => {
    const mine: Usage = new Map();
    add(mine, holding(e, observation), -1);
    add(mine, heldBy(e.rec.spec, observation.jobs.get(jobIdOf(e.rec.spec))), 1);
    const wanted = usageOf(e.rec.spec, tasks);
    for (const [name, want] of wanted) {
      const s = servers.get(name);
      if (!s) return false;
      const u = used.get(name) ?? {};
      const m = mine.get(name) ?? {};
      for (const [k, v] of Object.entries(want)) {
        const free = (s.capacity[k] ?? 0) - (s.reserved[k] ?? 0) - (u[k] ?? 0) - (m[k] ?? 0);
        if (v > free + 1e-9) return false;
      }
    }
    return true;
  };
}
