/**
 * Where the pre-run's samples run (paper §3.2): small, short runs placed on what is free once the
 * jobs the policy does not move are counted. Pure; the runtime's pre-run phase calls it.
 */
import type { Resources } from '../../../../shared/src/units';
import { admitsAll } from '../core/node-match';
import type { JobShape, RoleConstraints, ServerSnapshot, TaskPlacement, TaskRole } from '../types';

/** What placing a sample needs to know of a job. */
export interface SampleJob {
  readonly psDemand: Resources;
  readonly workerDemand: Resources;
  readonly nodeConstraints?: RoleConstraints | undefined;
}

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
  spec: Pick<SampleJob, 'nodeConstraints'>,
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
  spec: Pick<SampleJob, 'psDemand' | 'workerDemand'>,
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
