/**
 * The paper's pre-run (§3.2): before a job is scheduled, it runs briefly at a handful of
 * shapes to seed its speed model. Pure helpers; the controller drives them.
 */
import type { Resources } from '../../../shared/src/units';
import { admitsAll } from '../scheduling/core/node-match';
import type { JobShape, ServerSnapshot, TaskPlacement, TaskRole } from '../scheduling/types';
import type { JobSpec } from './job-spec';

/**
 * The pre-run's defaults: how many sample shapes (the paper ran 5) and how large they may be.
 * In the simulator (paper workload, 5 seeds, through this loop) every sample beyond the first costs
 * more than its better first fit gains: avg JCT 1,270 s without a pre-run, 1,267 s with one sample
 * (1×1), 1,433 s with 2, 1,493 s with 4 (ADR 0009). One sample is the default: the job's first
 * decision starts from a measured speed at no cost over none. A sample ends after this many speed
 * records per worker (each a Speedometer average of its batches; the warm-up one is not counted).
 */
export const PRE_RUN_DEFAULTS = { budget: 1, maxPs: 2, maxWorkers: 3, recordsPerWorker: 1 } as const;

/** Free resources per server: capacity − reserved − `used`. */
export function freeResources(
  servers: readonly ServerSnapshot[],
  used: ReadonlyMap<string, Resources>,
): Map<string, Resources> {
  const out = new Map<string, Resources>();
  for (const s of servers) {
    const free: Record<string, number> = { ...s.capacity };
    for (const [k, v] of Object.entries(s.reserved)) free[k] = (free[k] ?? 0) - v;
    for (const [k, v] of Object.entries(used.get(s.name) ?? {})) free[k] = (free[k] ?? 0) - v;
    out.set(s.name, free);
  }
  return out;
}

/** Whether a task of `role` may run on the named server (its pod template's node constraints). */
export type RoleFilter = (role: TaskRole, server: string) => boolean;

/** The filter for `spec` on `servers`: every server for a job without node constraints. */
export function roleFilter(
  spec: Pick<JobSpec, 'nodeConstraints'>,
  servers: readonly ServerSnapshot[],
): RoleFilter {
  const c = spec.nodeConstraints;
  if (!c) return () => true;
  const byName = new Map(servers.map((s) => [s.name, s]));
  return (role, name) => {
    const s = byName.get(name);
    return s !== undefined && admitsAll(c[role], s);
  };
}

/** The server with the most room that fits `demand` (among those `ok` accepts), or null. */
export function pickServer(
  free: ReadonlyMap<string, Resources>,
  demand: Resources,
  ok: (server: string) => boolean = () => true,
): string | null {
  let best: string | null = null;
  let bestRoom = -Infinity;
  for (const [name, f] of free) {
    if (!fits(f, demand) || !ok(name)) continue;
    const room = f.cpu ?? 0;
    if (room > bestRoom) [best, bestRoom] = [name, room];
  }
  return best;
}

/** Every task of `shape` on one server. */
export function placeOn(server: string, shape: JobShape): TaskPlacement[] {
  return [
    ...Array.from({ length: shape.ps }, (_, index) => ({ role: 'ps' as const, index, server })),
    ...Array.from({ length: shape.workers }, (_, index) => ({ role: 'worker' as const, index, server })),
  ];
}

export function addResources(a: Resources, b: Resources): Resources {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function scale(r: Resources, n: number): Resources {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v * n]));
}

/** A small stable hash of a job id, to seed its sample-shape choice. */
export function seedOf(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i += 1) h = Math.imul(h ^ id.charCodeAt(i), 16777619) >>> 0;
  return h;
}

const fits = (free: Resources, demand: Resources): boolean =>
  Object.entries(demand).every(([k, v]) => (free[k] ?? 0) >= v - 1e-9);

function subtract(free: Map<string, Resources>, server: string, demand: Resources): void {
  const f: Record<string, number> = { ...(free.get(server) ?? {}) };
  for (const [k, v] of Object.entries(demand)) f[k] = (f[k] ?? 0) - v;
  free.set(server, f);
}

/**
 * Where one pre-run sample runs: on one server when one has room for every task (a sample should
 * not pay for the network), otherwise task by task on the server with the most room for it (GPU
 * workers rarely fit one server). Null when the free resources cannot hold the shape. Takes what
 * it places out of `free`.
 */
export function placePreRun(
  free: Map<string, Resources>,
  spec: Pick<JobSpec, 'psDemand' | 'workerDemand'>,
  shape: JobShape,
  admits: RoleFilter = () => true,
): TaskPlacement[] | null {
  const whole = pickServer(
    free,
    addResources(scale(spec.psDemand, shape.ps), scale(spec.workerDemand, shape.workers)),
    (s) => (shape.ps === 0 || admits('ps', s)) && (shape.workers === 0 || admits('worker', s)),
  );
  if (whole !== null) {
    const placement = placeOn(whole, shape);
    for (const t of placement) subtract(free, whole, t.role === 'ps' ? spec.psDemand : spec.workerDemand);
    return placement;
  }
  const trial = new Map(free);
  const placement: TaskPlacement[] = [];
  for (const t of placeOn('', shape)) {
    const demand = t.role === 'ps' ? spec.psDemand : spec.workerDemand;
    const server = pickServer(trial, demand, (s) => admits(t.role, s));
    if (server === null) return null;
    subtract(trial, server, demand);
    placement.push({ ...t, server });
  }
  for (const [k, v] of trial) free.set(k, v);
  return placement;
}
