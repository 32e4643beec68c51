/**
 * How placement changes a job's true speed (paper §4.2, Theorem 1): traffic between a worker and a
 * parameter server on the same machine does not cross the 1 GbE network. The measured speeds are taken
 * as those of a spread placement (every worker–PS pair remote); a more local placement shortens the
 * communication part of the step by the factor `localCost` for the local pairs.
 */
import type { TaskPlacement } from '../scheduling/types';

/** Cost of a local worker–PS exchange relative to a remote one (loopback vs 1 GbE). */
export const LOCAL_COST = 0.3;

/**
 * Remote fractions of placements already seen: a placement is an immutable array replaced on every
 * change, and the simulator asks for its job's speed at every event (recounting the same pairs was
 * ~1.6 % of a paper-workload simulation's CPU, the closures around it as much again).
 */
const remoteOf = new WeakMap<readonly TaskPlacement[], number>();

/** Fraction of worker–PS pairs that cross servers (1 = all remote). */
export function remoteFraction(placement: readonly TaskPlacement[]): number {
  const known = remoteOf.get(placement);
  if (known !== undefined) return known;
  const ps = new Map<string, number>();
  let totalPs = 0;
  for (const t of placement) {
    if (t.role !== 'ps') continue;
    ps.set(t.server, (ps.get(t.server) ?? 0) + 1);
    totalPs += 1;
  }
  let totalW = 0;
  let local = 0;
  for (const t of placement) {
    if (t.role !== 'worker') continue;
    totalW += 1;
    local += ps.get(t.server) ?? 0;
  }
  const r = totalPs === 0 || totalW === 0 ? 1 : 1 - local / (totalPs * totalW);
  remoteOf.set(placement, r);
  return r;
}

/**
 * Speed multiplier of a placement for a job whose step time is `commShare` communication (0..1) when
 * every pair is remote: step' = step · (1 − commShare · (1 − remote) · (1 − LOCAL_COST)).
 */
export function placementSpeedFactor(commShare: number, placement: readonly TaskPlacement[]): number {
  return remoteSpeedFactor(commShare, remoteFraction(placement));
}

/** The same multiplier for a fraction `remote` of remote pairs (0: every pair local, the fastest). */
export function remoteSpeedFactor(commShare: number, remote: number): number {
  const saved = commShare * (1 - remote) * (1 - LOCAL_COST);
  return 1 / Math.max(1 - saved, 0.05);
}

/** Communication share of the step time from Eq. 4 θ (sync): the w/p, w and p terms over the total. */
export function syncCommShare(theta: readonly number[], batch: number, p: number, w: number): number {
  // Indexed directly, no helper closure: this runs at every simulated event.
  const comm = ((theta[2] ?? 0) * w) / p + (theta[3] ?? 0) * w + (theta[4] ?? 0) * p;
  const total = ((theta[0] ?? 0) * batch) / w + (theta[1] ?? 0) + comm;
  return total > 0 ? comm / total : 0;
}

/** Communication share from Eq. 3 θ (async). */
export function asyncCommShare(theta: readonly number[], p: number, w: number): number {
  const comm = ((theta[1] ?? 0) * w) / p + (theta[2] ?? 0) * w + (theta[3] ?? 0) * p;
  const total = (theta[0] ?? 0) + comm;
  return total > 0 ? comm / total : 0;
}
