/**
 * Which servers each role of a job may use (node selectors, required node affinity, taints), as
 * extra dimensions of the resource vectors: one "slot" resource per distinct set of admitting
 * servers. A server in the set offers plenty of that slot; a task of a role restricted to the set
 * asks for one. Every allocator, placer, keep and straggler step already refuses a server that
 * lacks a resource a task asks for (a GPU worker never lands on a CPU-only server), so the same
 * fit test now also keeps a task off a server its pod template excludes — in every policy, with
 * no policy knowing about labels. Slots are not resources: they never count in shares, the
 * stranding guard or the servers' room (see `ResourceSpace.real`). Unconstrained jobs, and roles
 * that every server admits, add nothing, so clusters without constraints decide exactly as before.
 */
import type { JobSnapshot, NodeConstraint, ServerSnapshot } from '../types';
import { admitsAll } from './node-match';

/** What a server offers of a slot it is in: more than any number of tasks a server can hold. */
export const SLOT_CAPACITY = 1e6;

export interface RoleSlots {
  /** Slot positions (0-based among the slots) a task of the role asks for one of each. */
  readonly ps: readonly number[];
  readonly worker: readonly number[];
}

export interface Eligibility {
  /** Per slot, the positions (in `servers`) of the servers that offer it. */
  readonly slots: readonly (readonly number[])[];
  /** Jobs with at least one restricted role. */
  readonly jobs: ReadonlyMap<string, RoleSlots>;
  /** Jobs a role of which no server admits, with the reason. */
  readonly nowhere: ReadonlyMap<string, string>;
}

const NONE: RoleSlots = { ps: [], worker: [] };

/**
 * Slots for `jobs` over `servers`. Each distinct constraint list is matched against every server
 * once per round (jobs of one team usually share a few), and lists that admit the same servers
 * share one slot.
 */
export function eligibility(servers: readonly ServerSnapshot[], jobs: readonly JobSnapshot[]): Eligibility {
  const byConstraint = new Map<string, number | 'all' | 'none'>();
  const bySet = new Map<string, number>();
  const slots: number[][] = [];
  const slotOf = (list: readonly NodeConstraint[] | undefined): number | 'all' | 'none' => {
    if (!list || list.length === 0) return 'all';
    const key = JSON.stringify(list);
    const known = byConstraint.get(key);
    if (known !== undefined) return known;
    const admitted: number[] = [];
    servers.forEach((s, i) => {
      if (admitsAll(list, s)) admitted.push(i);
    });
    let slot: number | 'all' | 'none';
    if (admitted.length === servers.length) slot = 'all';
    else if (admitted.length === 0) slot = 'none';
    else {
      const set = admitted.join(',');
      slot = bySet.get(set) ?? slots.push(admitted) - 1;
      bySet.set(set, slot);
    }
    byConstraint.set(key, slot);
    return slot;
  };
  const out = new Map<string, RoleSlots>();
  const nowhere = new Map<string, string>();
  for (const job of jobs) {
    if (!job.constraints) continue;
    const ps = slotOf(job.constraints.ps);
    const worker = slotOf(job.constraints.worker);
    const blocked = [ps === 'none' ? 'parameter server' : null, worker === 'none' ? 'worker' : null];
    const roles = blocked.filter((r) => r !== null);
    if (roles.length > 0) {
      nowhere.set(
        job.id,
        `no server admits the ${roles.join(' or ')} pod template (nodeSelector, node affinity or taints)`,
      );
      continue;
    }
    const roleSlots = {
      ps: typeof ps === 'number' ? [ps] : [],
      worker: typeof worker === 'number' ? [worker] : [],
    };
    if (roleSlots.ps.length + roleSlots.worker.length > 0) out.set(job.id, roleSlots);
  }
  return { slots, jobs: out, nowhere };
}

export const slotsOf = (e: Eligibility, jobId: string): RoleSlots => e.jobs.get(jobId) ?? NONE;

/** The name of a slot dimension (never a Kubernetes resource name: those cannot start with '@'). */
export const slotName = (slot: number): string => `@eligible/${slot}`;
