/**
 * Reading an observation: what a job holds and what our jobs hold on each server. Pure.
 */
import type { Resources } from '../../../shared/src/units';
import type { JobShape, TaskPlacement } from '../scheduling/types';
import type { ObservedJob, ObservedTask } from './backend';
import type { CurrentJob } from './core';
import type { JobSpec } from './job-spec';

/** Tasks that hold (or are about to hold) their server: not yet gone, not ended. */
export const isLive = (t: ObservedTask): boolean => t.state === 'pending' || t.state === 'running';

/** Tasks that still hold their server's resources, including those shutting down. */
const holds = (t: ObservedTask): boolean => isLive(t) || t.state === 'stopping';

/**
 * What a job holds now, from its live tasks: the shape is the count of each role, the placement
 * where each runs. A half-rolled-out set is simply a shape that the next plan replaces.
 */
export function currentOf(job: ObservedJob | undefined): CurrentJob | null {
  if (!job) return null;
  const cached = currentCache.get(job);
  if (cached !== undefined) return cached;
  const value = computeCurrent(job);
  currentCache.set(job, value);
  return value;
}

/** Observations are values: what is derived from one is derived once (a backend may keep them). */
const currentCache = new WeakMap<ObservedJob, CurrentJob | null>();

function computeCurrent(job: ObservedJob): CurrentJob | null {
  const live = job.tasks.filter(isLive);
  if (live.length === 0) return null;
  const placement: TaskPlacement[] = live
    .map((t) => ({ role: t.role, index: t.index, server: t.server }))
    .sort((a, b) => (a.role === b.role ? a.index - b.index : a.role === 'ps' ? -1 : 1));
  const shape: JobShape = {
    ps: placement.filter((p) => p.role === 'ps').length,
    workers: placement.filter((p) => p.role === 'worker').length,
  };
  // Parameter servers without workers (or the reverse) train nothing: the job runs no shape, and
  // the leftovers are stopped by its next start.
  if (shape.ps === 0 || shape.workers === 0) return null;
  return { shape, placement };
}

/** True when anything of the job still holds a server (live or shutting down). */
export const holdsAnything = (job: ObservedJob | undefined): boolean => (job?.tasks ?? []).some(holds);

type Usage = Map<string, Record<string, number>>;

function add(into: Usage, server: string, demand: Resources): void {
  const u = into.get(server) ?? {};
  for (const [k, v] of Object.entries(demand)) u[k] = (u[k] ?? 0) + v;
  into.set(server, u);
}

/** Resources per server of a set of tasks. */
export function usageOf(
  spec: Pick<JobSpec, 'psDemand' | 'workerDemand'>,
  tasks: readonly { readonly role: string; readonly server: string }[],
): Usage {
  const out: Usage = new Map();
  for (const t of tasks) add(out, t.server, t.role === 'ps' ? spec.psDemand : spec.workerDemand);
  return out;
}

/** Component-wise maximum per server: what a job in transition may hold at worst. */
export function maxUsage(a: Usage, b: Usage): Usage {
  const out: Usage = new Map();
  for (const [server, u] of a) out.set(server, { ...u });
  for (const [server, u] of b) {
    const o = out.get(server) ?? {};
    for (const [k, v] of Object.entries(u)) o[k] = Math.max(o[k] ?? 0, v);
    out.set(server, o);
  }
  return out;
}

/** Adds `b` into `a` (per server, per resource). */
export function addUsage(a: Usage, b: ReadonlyMap<string, Resources>): void {
  for (const [server, u] of b) add(a, server, u);
}

/** Tasks of a job that still hold their server, for the held-resources view. */
export const holdingTasks = (job: ObservedJob | undefined): ObservedTask[] =>
  (job?.tasks ?? []).filter(holds);

/** Tasks shutting down (they hold resources but are no longer part of any shape). */
export const stoppingTasks = (job: ObservedJob | undefined): ObservedTask[] =>
  (job?.tasks ?? []).filter((t) => t.state === 'stopping');

const heldCache = new WeakMap<ObservedJob, Usage>();

/** What the job's tasks that still hold their server hold, per server (derived once per observation). */
export function heldBy(
  spec: Pick<JobSpec, 'psDemand' | 'workerDemand'>,
  job: ObservedJob | undefined,
): ReadonlyMap<string, Record<string, number>> {
  if (!job) return new Map();
  let u = heldCache.get(job);
  if (!u) heldCache.set(job, (u = usageOf(spec, holdingTasks(job))));
  return u;
}
