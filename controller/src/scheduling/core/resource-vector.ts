/**
 * Dense resource vectors. Policies convert every `Resources` record once per round into a
 * `Float64Array` over a fixed, sorted list of resource names so that the inner loops (fit checks,
 * subtraction) touch a few numbers instead of hashing strings — this is what makes a round over
 * 4,000 jobs and 16,000 servers fast.
 */
import type { Resources } from '../../../../shared/src/units';

/** The resource names seen in one round, sorted, and their positions. */
export interface ResourceSpace {
  readonly names: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  /**
   * Positions [0, real) are resources; [real, names.length) are eligibility slots
   * (`eligibility.ts`), which take part in fit tests only.
   */
  readonly real: number;
}

/** Builds the space of every resource name that appears in any of `records`. */
export function resourceSpace(records: Iterable<Resources>): ResourceSpace {
  const names = new Set<string>();
  for (const r of records) for (const name of Object.keys(r)) names.add(name);
  const sorted = [...names].sort();
  return { names: sorted, index: new Map(sorted.map((n, i) => [n, i])), real: sorted.length };
}

/** `space` with `extra` slot dimensions appended after its resources. */
export function withSlots(space: ResourceSpace, extra: readonly string[]): ResourceSpace {
  if (extra.length === 0) return space;
  const names = [...space.names.slice(0, space.real), ...extra];
  return { names, index: new Map(names.map((n, i) => [n, i])), real: space.real };
}

/** A record → a dense vector; non-finite or negative amounts count as 0. */
export function toVector(space: ResourceSpace, r: Resources): Float64Array {
  const v = new Float64Array(space.names.length);
  for (const [name, amount] of Object.entries(r)) {
    const i = space.index.get(name);
    if (i !== undefined && Number.isFinite(amount) && amount > 0) v[i] = amount;
  }
  return v;
}

/** True when `demand` (times `count`) fits in `free` on every resource. */
export function fits(free: Float64Array, demand: Float64Array, count = 1): boolean {
  for (let i = 0; i < demand.length; i++) {
    if ((demand[i] ?? 0) * count > (free[i] ?? 0) + EPSILON) return false;
  }
  return true;
}

/** free -= demand × count, in place. */
export function subtract(free: Float64Array, demand: Float64Array, count = 1): void {
  for (let i = 0; i < demand.length; i++) free[i] = (free[i] ?? 0) - (demand[i] ?? 0) * count;
}

/** free += demand × count, in place. */
export function add(free: Float64Array, demand: Float64Array, count = 1): void {
  for (let i = 0; i < demand.length; i++) free[i] = (free[i] ?? 0) + (demand[i] ?? 0) * count;
}

/** a·ps + b·worker as a new vector (the demand of a bundle of tasks). */
export function bundle(
  ps: Float64Array,
  psCount: number,
  worker: Float64Array,
  workers: number,
): Float64Array {
  const v = new Float64Array(ps.length);
  for (let i = 0; i < ps.length; i++) v[i] = (ps[i] ?? 0) * psCount + (worker[i] ?? 0) * workers;
  return v;
}

/**
 * The dominant share of a demand (DRF): its largest share of `total` over all resources.
 * Infinity when it asks for a resource the cluster does not have at all.
 */
export function dominantShare(demand: Float64Array, total: Float64Array): number {
  let share = 0;
  for (let i = 0; i < demand.length; i++) {
    const d = demand[i] ?? 0;
    if (d <= 0) continue;
    const t = total[i] ?? 0;
    if (t <= 0) return Infinity;
    share = Math.max(share, d / t);
  }
  return share;
}

/**
 * Tolerance of fit checks: float sums of fractional CPUs (0.1 + 0.2) must not reject a task that
 * exactly fits. Far below any real resource unit (millicores, bytes).
 */
export const EPSILON = 1e-9;
