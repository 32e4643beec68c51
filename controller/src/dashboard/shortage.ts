/**
 * Which resource keeps a waiting job out, in words: the policy says "does not fit", a person asks
 * "short of what?". Compares what the job's smallest shape needs with what the servers have free
 * now (capacity, minus others' reservations, minus what our jobs hold). Pure.
 */
import { GiB, type Resources } from '../../../shared/src/units';
import type { ObservedRecord } from '../runtime/job-entry';
import type { JobSpec } from '../runtime/job-spec';
import type { ServerSnapshot } from '../scheduling/types';
import { num } from './format';

/** What each server has free now. */
export function freeResources(
  servers: readonly ServerSnapshot[],
  records: readonly ObservedRecord[],
): Map<string, Record<string, number>> {
  const free = new Map<string, Record<string, number>>();
  for (const s of servers) {
    const f: Record<string, number> = {};
    for (const [r, v] of Object.entries(s.capacity)) f[r] = v - (s.reserved[r] ?? 0);
    free.set(s.name, f);
  }
  for (const rec of records)
    for (const p of rec.current?.placement ?? []) {
      const f = free.get(p.server);
      if (f) subtract(f, p.role === 'ps' ? rec.spec.psDemand : rec.spec.workerDemand);
    }
  return free;
}

/**
 * Why the smallest shape of `spec` does not fit, naming the resource.
 * @example "short of cpu: its smallest shape (1 PS + 1 worker) needs 2, 1 of 24 free"
 */
export function shortageInWords(
  spec: Pick<JobSpec, 'minPs' | 'minWorkers' | 'psDemand' | 'workerDemand'>,
  free: ReadonlyMap<string, Readonly<Record<string, number>>>,
  capacity: Resources,
): string {
  const need: Record<string, number> = {};
  add(need, spec.psDemand, spec.minPs);
  add(need, spec.workerDemand, spec.minWorkers);
  const total: Record<string, number> = {};
  for (const f of free.values()) add(total, f, 1);
  const shape = `${spec.minPs} PS + ${spec.minWorkers} worker${spec.minWorkers === 1 ? '' : 's'}`;
  const short = Object.keys(need)
    .filter((r) => (need[r] ?? 0) > Math.max(0, total[r] ?? 0) + 1e-9)
    .map(
      (r) =>
        `${r}: needs ${amount(r, need[r] ?? 0)}, ${amount(r, Math.max(0, total[r] ?? 0))} of ${amount(r, capacity[r] ?? 0)} free`,
    );
  if (short.length > 0) return `short of ${short.join('; ')} (its smallest shape, ${shape})`;
  const fitsOne = (demand: Resources) =>
    [...free.values()].some((f) => Object.entries(demand).every(([r, v]) => (f[r] ?? 0) >= v));
  const task = !fitsOne(spec.workerDemand)
    ? 'a worker'
    : !fitsOne(spec.psDemand)
      ? 'a parameter server'
      : null;
  const freeText = Object.keys(need)
    .map((r) => `${r} ${amount(r, Math.max(0, total[r] ?? 0))}`)
    .join(', ');
  return task
    ? `enough free in total (${freeText}), but no server has room for ${task}`
    : `enough free in total (${freeText}), but spread over the servers so that ${shape} cannot be placed`;
}

/** True when a wait reason says the job does not fit (the reasons of the policies and the pre-run). */
export const saysDoesNotFit = (reason: string | null): boolean =>
  reason !== null && /does not fit|can hold|no set of servers|room to pre-run/.test(reason);

const amount = (r: string, v: number): string => (r === 'memory' ? `${num(v / GiB)} GiB` : num(v));

function add(into: Record<string, number>, r: Resources, times: number): void {
  for (const [k, v] of Object.entries(r)) into[k] = (into[k] ?? 0) + v * times;
}

function subtract(from: Record<string, number>, r: Resources): void {
  for (const [k, v] of Object.entries(r)) from[k] = (from[k] ?? 0) - v;
}
