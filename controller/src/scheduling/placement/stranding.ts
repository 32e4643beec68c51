/**
 * Stranding guard of the Optimus placer (beyond the paper; Theorem 1 assumes one kind of
 * server). On a heterogeneous cluster a GPU server's CPUs and memory are the only ones a GPU
 * worker can use; a PS (or a PS-only bundle of an even split) that takes them strands the
 * server's GPUs: idle, yet unusable by anyone. Measured on the paper workload: Optimus used ~9 of
 * 12 GPUs per round while new jobs waited for a GPU server with room.
 *
 * The guard: a resource that only some servers offer is "rare". For every rare resource r we keep
 * the least common resources one unit of r needs to be usable (the componentwise minimum of
 * demand / demand[r] over every task in the round that asks for r). A placement is guarded-fit
 * when, after it, each rare unit still free on the server keeps that much of the rest free.
 */
import type { PreparedInput } from '../core/prepare';
import { EPSILON, fits } from '../core/resource-vector';

/** `fits` with or without the guard. */
export type FitTest = (free: Float64Array, demand: Float64Array) => boolean;

/** Per rare resource: the common resources one free unit keeps back. Empty: no rare resource. */
export function strandingReserve(input: PreparedInput): Map<number, Float64Array> {
  const r = input.space.names.length;
  const offeredBy = new Float64Array(r);
  for (const s of input.servers)
    for (let i = 0; i < r; i++) if ((s.allocatable[i] ?? 0) > 0) offeredBy[i] = (offeredBy[i] ?? 0) + 1;
  const reserve = new Map<number, Float64Array>();
  // Only resources can be stranded; eligibility slots (positions ≥ real) are not resources.
  for (let rare = 0; rare < input.space.real; rare++) {
    if ((offeredBy[rare] ?? 0) === 0 || offeredBy[rare] === input.servers.length) continue;
    let per: Float64Array | null = null;
    for (const job of input.jobs) {
      for (const d of [job.ps, job.worker]) {
        const unit = d[rare] ?? 0;
        if (unit <= 0) continue;
        const v = d.map((x, i) => (i === rare || i >= input.space.real ? 0 : x / unit));
        per = per ? per.map((x, i) => Math.min(x, v[i] ?? 0)) : v;
      }
    }
    if (per) reserve.set(rare, per);
  }
  return reserve;
}

/** A fit test that refuses placements which would strand a rare resource. */
export function guardedFit(reserve: ReadonlyMap<number, Float64Array>): FitTest {
  if (reserve.size === 0) return fits;
  return (free, demand) => {
    if (!fits(free, demand)) return false;
    for (const [rare, per] of reserve) {
      const left = (free[rare] ?? 0) - (demand[rare] ?? 0);
      if (left < 1 - EPSILON) continue;
      const units = Math.floor(left + EPSILON);
      for (let i = 0; i < per.length; i++) {
        if (i === rare) continue;
        const need = units * (per[i] ?? 0);
        // Only what this placement takes can strand: a server already short stays acceptable
        // for tasks that do not touch that resource.
        if ((demand[i] ?? 0) > 0 && (free[i] ?? 0) - (demand[i] ?? 0) < need - EPSILON) return false;
      }
    }
    return true;
  };
}
