/**
 * Jobs that can never run: a task (one PS or one worker) larger than every server, even an empty
 * one. Refused at submission rather than left waiting forever. Pure.
 */
import { formatAmount, RESOURCE_MEMORY, type Resources } from '../../../shared/src/units';
import type { ServerSnapshot } from '../scheduling/types';
import type { JobSpec } from './job-spec';
import { plural } from '../scheduling/words';

/**
 * Why `spec` can never fit on `servers`, or null when each of its task kinds fits on some server.
 * With no servers known yet (a cluster still syncing) nothing is refused.
 *
 * @example
 * neverFits(spec, [{ name: 'a', capacity: { cpu: 8 }, reserved: {} }]) // null, or "a worker needs cpu 16 …"
 */
export function neverFits(
  spec: Pick<JobSpec, 'psDemand' | 'workerDemand'>,
  servers: readonly ServerSnapshot[],
): string | null {
  if (servers.length === 0) return null;
  for (const [role, demand] of [
    ['parameter server', spec.psDemand],
    ['worker', spec.workerDemand],
  ] as const) {
    if (servers.some((s) => holds(s.capacity, demand))) continue;
    return `a ${role} needs ${describe(demand)}, more than any server offers (largest: ${largest(servers, demand)})${bytesHint(demand)}`;
  }
  return null;
}

const holds = (capacity: Resources, demand: Resources): boolean =>
  Object.entries(demand).every(([k, v]) => v <= (capacity[k] ?? 0));

function describe(r: Resources): string {
  return Object.entries(r)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${formatAmount(k, v)}`)
    .join(', ');
}

/** The largest capacity of each demanded resource, over all servers. */
function largest(servers: readonly ServerSnapshot[], demand: Resources): string {
  return Object.keys(demand)
    .filter((k) => (demand[k] ?? 0) > 0)
    .map((k) => `${k} ${formatAmount(k, Math.max(0, ...servers.map((s) => s.capacity[k] ?? 0)))}`)
    .join(', ');
}

/** Below this, a memory demand is surely a count of GiB written as bytes (`memory: 2`). */
const SUSPICIOUS_BYTES = 1024 ** 2;

/** `memory: 2` is 2 bytes, as in Kubernetes; say so when the figure looks like a GiB count. */
function bytesHint(demand: Resources): string {
  const m = demand[RESOURCE_MEMORY];
  if (m === undefined || m <= 0 || m >= SUSPICIOUS_BYTES) return '';
  return `; memory is in bytes: ${m} GiB is ${m * 1024 ** 3}`;
}

/** Why a shape lies outside the job's PS/worker limits, or null when it lies within them. */
export function outsideLimits(
  spec: Pick<JobSpec, 'minPs' | 'maxPs' | 'minWorkers' | 'maxWorkers'>,
  shape: { readonly ps: number; readonly workers: number },
): string | null {
  const problems: string[] = [];
  if (shape.ps < spec.minPs || shape.ps > spec.maxPs)
    problems.push(`${plural(shape.ps, 'PS', 'PS')} is outside the job's limits ${spec.minPs}–${spec.maxPs}`);
  if (shape.workers < spec.minWorkers || shape.workers > spec.maxWorkers)
    problems.push(
      `${plural(shape.workers, 'worker')} is outside the job's limits ${spec.minWorkers}–${spec.maxWorkers}`,
    );
  return problems.length === 0 ? null : `${problems.join('; ')}: the scheduler never chooses this shape`;
}
