/**
 * Phase 1 of every round: validate the snapshot and turn it into dense vectors. Invalid jobs and
 * servers become reasons, never exceptions, so one bad record cannot stop a round.
 */
import type { SpeedModel } from '../../models/speed/types';
import type { JobSnapshot, PolicyInput, ServerSnapshot } from '../types';
import { eligibility, SLOT_CAPACITY, slotName, slotsOf, type Eligibility } from './eligibility';
import { dominantShare, resourceSpace, toVector, withSlots, type ResourceSpace } from './resource-vector';

export interface PreparedServer {
  readonly name: string;
  /** Position in `PreparedInput.servers`. */
  readonly index: number;
  /** Capacity minus what others reserve, never negative. */
  readonly allocatable: Float64Array;
}

export interface PreparedJob {
  readonly snapshot: JobSnapshot;
  readonly id: string;
  readonly ps: Float64Array;
  readonly worker: Float64Array;
  /** Dominant share of one PS / one worker of the cluster's allocatable total. */
  readonly psShare: number;
  readonly workerShare: number;
  readonly minPs: number;
  readonly minWorkers: number;
  readonly maxPs: number;
  readonly maxWorkers: number;
  readonly priority: number;
  /** Copied out of the snapshot: the allocation loop reads them ~200,000 times per round in
   * random job order, and every pointer hop saved is a cache miss saved. */
  readonly steps: number;
  readonly speed: SpeedModel;
}

export interface PreparedInput {
  /** The caller's clock (`PolicyInput.now`). */
  readonly now: number;
  readonly space: ResourceSpace;
  readonly servers: readonly PreparedServer[];
  readonly serverIndex: ReadonlyMap<string, number>;
  /** Valid jobs sorted by id, so that decisions do not depend on input order. */
  readonly jobs: readonly PreparedJob[];
  /** Jobs rejected before scheduling, with the reason. */
  readonly invalid: ReadonlyMap<string, string>;
  /** Sum of allocatable over all servers. */
  readonly total: Float64Array;
  readonly restartCostSec: number;
}

/** Validates and vectorises a policy input. Pure. */
export function prepare(input: PolicyInput): PreparedInput {
  const unique = uniqueServers(input.servers);
  const eligible = eligibility(unique, input.jobs);
  const space = withSlots(
    resourceSpace(recordsOf(input)),
    eligible.slots.map((_, i) => slotName(i)),
  );
  const { servers, serverIndex } = prepareServers(space, unique, eligible);
  const total = new Float64Array(space.names.length);
  for (const s of servers)
    for (let i = 0; i < total.length; i++) total[i] = (total[i] ?? 0) + (s.allocatable[i] ?? 0);
  const invalid = new Map<string, string>();
  const seen = new Set<string>();
  const jobs: PreparedJob[] = [];
  for (const job of input.jobs) {
    if (seen.has(job.id)) continue; // the first record with an id wins; see decide() for the rest
    seen.add(job.id);
    const reason = jobProblem(job);
    const nowhere = eligible.nowhere.get(job.id);
    if (reason !== null) invalid.set(job.id, `invalid job: ${reason}`);
    else if (nowhere !== undefined) invalid.set(job.id, nowhere);
    else jobs.push(prepareJob(space, total, job, eligible));
  }
  jobs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const restartCostSec =
    Number.isFinite(input.restartCostSec) && input.restartCostSec > 0 ? input.restartCostSec : 0;
  return { now: input.now, space, servers, serverIndex, jobs, invalid, total, restartCostSec };
}

function* recordsOf(input: PolicyInput) {
  for (const s of input.servers) yield s.capacity;
  for (const j of input.jobs) {
    yield j.psDemand;
    yield j.workerDemand;
  }
}

/** Duplicate names: the first record wins. */
function uniqueServers(list: readonly ServerSnapshot[]): ServerSnapshot[] {
  const seen = new Set<string>();
  return list.filter((s) => !seen.has(s.name) && seen.add(s.name));
}

function prepareServers(space: ResourceSpace, list: readonly ServerSnapshot[], eligible: Eligibility) {
  const servers: PreparedServer[] = [];
  const serverIndex = new Map<string, number>();
  for (const s of list) {
    const allocatable = toVector(space, s.capacity);
    const reserved = toVector(space, s.reserved);
    for (let i = 0; i < allocatable.length; i++) {
      allocatable[i] = Math.max(0, (allocatable[i] ?? 0) - (reserved[i] ?? 0));
    }
    serverIndex.set(s.name, servers.length);
    servers.push({ name: s.name, index: servers.length, allocatable });
  }
  eligible.slots.forEach((members, slot) => {
    for (const i of members) {
      const a = servers[i]?.allocatable;
      if (a) a[space.real + slot] = SLOT_CAPACITY;
    }
  });
  return { servers, serverIndex };
}

function prepareJob(
  space: ResourceSpace,
  total: Float64Array,
  job: JobSnapshot,
  eligible: Eligibility,
): PreparedJob {
  const ps = toVector(space, job.psDemand);
  const worker = toVector(space, job.workerDemand);
  const slots = slotsOf(eligible, job.id);
  for (const slot of slots.ps) ps[space.real + slot] = 1;
  for (const slot of slots.worker) worker[space.real + slot] = 1;
  return {
    snapshot: job,
    id: job.id,
    ps,
    worker,
    psShare: dominantShare(ps, total),
    workerShare: dominantShare(worker, total),
    minPs: Math.max(1, job.minPs),
    minWorkers: Math.max(1, job.minWorkers),
    maxPs: job.maxPs,
    maxWorkers: job.maxWorkers,
    priority: job.priority ?? 1,
    steps: job.remaining.steps,
    speed: job.speed,
  };
}

const isCount = (n: number) => Number.isInteger(n) && n >= 0;

/** Why a job record cannot be scheduled, or null. */
export function jobProblem(job: JobSnapshot): string | null {
  if (typeof job.id !== 'string' || job.id.length === 0) return 'empty id';
  for (const [name, v] of [
    ['minPs', job.minPs],
    ['maxPs', job.maxPs],
    ['minWorkers', job.minWorkers],
    ['maxWorkers', job.maxWorkers],
  ] as const) {
    if (!isCount(v)) return `${name} must be a non-negative integer, got ${v}`;
  }
  if (job.maxPs < Math.max(1, job.minPs)) return `maxPs ${job.maxPs} < minPs ${Math.max(1, job.minPs)}`;
  if (job.maxWorkers < Math.max(1, job.minWorkers)) {
    return `maxWorkers ${job.maxWorkers} < minWorkers ${Math.max(1, job.minWorkers)}`;
  }
  const p = job.priority;
  if (p !== undefined && !(Number.isFinite(p) && p > 0)) return `priority must be > 0, got ${p}`;
  if (!Number.isFinite(job.arrivalTime)) return `arrivalTime must be a finite number, got ${job.arrivalTime}`;
  const steps = job.remaining.steps;
  if (!(Number.isFinite(steps) && steps >= 0)) return `remaining.steps must be ≥ 0, got ${steps}`;
  for (const [name, r] of [
    ['psDemand', job.psDemand],
    ['workerDemand', job.workerDemand],
  ] as const) {
    for (const [k, v] of Object.entries(r)) {
      if (!(Number.isFinite(v) && v >= 0)) return `${name}.${k} must be a finite amount ≥ 0, got ${v}`;
    }
    // A task that asks for nothing could be added without bound; every real task needs something.
    if (!Object.values(r).some((v) => v > 0)) return `${name} requests no resource`;
  }
  return null;
}
