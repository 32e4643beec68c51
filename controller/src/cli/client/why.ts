/**
 * `optimus why NAME`: why a job waits, from what the API shows — the reason in words, its place in
 * the queue, which resource is short for its minimum shape, and an estimate of when it starts. Pure:
 * the views, the cluster and `now` come in as values.
 *
 * The estimate replays the future the controller already predicts: the jobs that hold resources
 * release them at their predicted completion, and the queue ahead takes what fits first, in order.
 * It assumes that shapes stay as they are (the policy may shrink or grow jobs each round) and that
 * the jobs ahead, once started, hold on until after this one starts; it says so with the answer.
 */
import type { Resources } from '../../../../shared/src/units';
import { queuePositions, waitingInWords } from '../../dashboard/job-rows';
import type { ClusterViewJson, JobView } from '../../runtime/api-schemas';

export interface Shortfall {
  readonly resource: string;
  /** What the minimum shape needs, base units. */
  readonly need: number;
  /** Free now over all servers (capacity − reserved − used), base units. */
  readonly free: number;
}

export interface PredictedStart {
  /** Wall ms; `now` when it fits already (it starts at the next round). */
  readonly atMs: number;
  /** The jobs whose predicted completion frees the room, in order; empty when it fits now. */
  readonly afterJobs: readonly string[];
}

export interface WhyAnswer {
  readonly id: string;
  readonly phase: JobView['phase'];
  /** True while the job holds nothing and is not over (pending or waiting). */
  readonly waiting: boolean;
  /** Why it waits (or what it does), in words; null while it simply runs. */
  readonly reason: string | null;
  readonly queuePosition: number | null;
  /** Jobs that hold nothing and wait, this one included. */
  readonly queueLength: number;
  readonly minimumShape: { readonly ps: number; readonly workers: number };
  /** What the minimum shape holds, base units. */
  readonly need: Resources;
  /** Free now, summed over servers, base units; null when the cluster view is not served. */
  readonly free: Resources | null;
  /** The resources of `need` that `free` does not cover. */
  readonly short: readonly Shortfall[];
  /** When enough is free in total but no single server has room for one task of a role. */
  readonly noServerFits: readonly { readonly role: 'ps' | 'worker'; readonly demand: Resources }[];
  readonly predictedStart: PredictedStart | null;
  /** Why there is no estimate, or what it assumes. */
  readonly predictedStartNote: string;
}

type Vec = Record<string, number>;

const over = (v: JobView): boolean => v.phase === 'done' || v.phase === 'failed';
const holdsNothing = (v: JobView): boolean => v.shape === null && !over(v);

/** What `ps` parameter servers and `workers` workers of `v` hold. */
export function shapeNeed(v: JobView, ps: number, workers: number): Vec {
  const out: Vec = {};
  for (const [k, a] of Object.entries(v.demand.ps)) out[k] = (out[k] ?? 0) + ps * a;
  for (const [k, a] of Object.entries(v.demand.worker)) out[k] = (out[k] ?? 0) + workers * a;
  for (const k of Object.keys(out)) if (out[k] === 0) delete out[k];
  return out;
}

const fits = (free: Vec, need: Resources): boolean =>
  Object.entries(need).every(([k, a]) => a <= (free[k] ?? 0) + 1e-9);
const add = (into: Vec, r: Resources, sign = 1): void => {
  for (const [k, a] of Object.entries(r)) into[k] = (into[k] ?? 0) + sign * a;
};

function freeOf(s: { capacity: Resources; reserved: Resources; used: Resources }): Vec {
  const out: Vec = {};
  for (const [k, cap] of Object.entries(s.capacity))
    out[k] = Math.max(0, cap - (s.reserved[k] ?? 0) - (s.used[k] ?? 0));
  return out;
}

export function explainWait(
  views: readonly JobView[],
  id: string,
  cluster: ClusterViewJson | null,
  nowMs: number,
): WhyAnswer {
  const v = views.find((x) => x.id === id);
  if (!v) throw new Error(`no job ${id} in the list`);
  const positions = queuePositions(views);
  const minimumShape = { ps: v.limits.minPs, workers: v.limits.minWorkers };
  const need = shapeNeed(v, minimumShape.ps, minimumShape.workers);
  const waiting = holdsNothing(v);
  const free = cluster ? sumFree(cluster) : null;
  const short = waiting && free ? shortfalls(need, free) : [];
  const base = {
    id,
    phase: v.phase,
    waiting,
    reason: waitingInWords(v, undefined),
    queuePosition: positions.get(id) ?? null,
    queueLength: positions.size,
    minimumShape,
    need,
    free,
    short,
    noServerFits: waiting && cluster && short.length === 0 ? noServerFits(v, cluster) : [],
  };
  if (!waiting) return { ...base, predictedStart: null, predictedStartNote: notWaiting(v) };
  if (!free)
    return { ...base, predictedStart: null, predictedStartNote: 'this controller serves no cluster view' };
  return { ...base, ...predictStart(views, v, positions, free, nowMs) };
}

function sumFree(cluster: ClusterViewJson): Vec {
  const total: Vec = {};
  for (const s of cluster.servers) add(total, freeOf(s));
  return total;
}

function shortfalls(need: Resources, free: Resources): Shortfall[] {
  return Object.entries(need)
    .filter(([k, a]) => a > (free[k] ?? 0) + 1e-9)
    .map(([resource, a]) => ({ resource, need: a, free: free[resource] ?? 0 }));
}

function noServerFits(v: JobView, cluster: ClusterViewJson): WhyAnswer['noServerFits'] {
  const frees = cluster.servers.map(freeOf);
  return (['ps', 'worker'] as const)
    .filter((role) => !frees.some((f) => fits(f, v.demand[role])))
    .map((role) => ({ role, demand: v.demand[role] }));
}

function notWaiting(v: JobView): string {
  if (over(v)) return `the job is ${v.phase}`;
  return 'the job holds resources: it is not waiting';
}

/** Replays predicted completions until the queue ahead and then this job fit (see the file's comment). */
function predictStart(
  views: readonly JobView[],
  me: JobView,
  positions: ReadonlyMap<string, number>,
  freeNow: Resources,
  nowMs: number,
): { predictedStart: PredictedStart | null; predictedStartNote: string } {
  const free: Vec = { ...freeNow };
  const mine = positions.get(me.id) ?? Number.POSITIVE_INFINITY;
  const pending = views
    .filter((x) => (positions.get(x.id) ?? Number.POSITIVE_INFINITY) <= mine)
    .sort((a, b) => (positions.get(a.id) ?? 0) - (positions.get(b.id) ?? 0))
    .map((x) => ({ id: x.id, need: shapeNeed(x, x.limits.minPs, x.limits.minWorkers) }));
  if (!pending.some((p) => p.id === me.id))
    pending.push({ id: me.id, need: shapeNeed(me, me.limits.minPs, me.limits.minWorkers) });
  /** Starts, in queue order, every pending job that fits; true once this one has. */
  const admit = (): boolean => {
    for (let i = 0; i < pending.length;) {
      const p = pending[i]!;
      if (!fits(free, p.need)) {
        i += 1;
        continue;
      }
      add(free, p.need, -1);
      pending.splice(i, 1);
      if (p.id === me.id) return true;
    }
    return false;
  };
  const assumes =
    'estimate: running jobs keep their shapes and finish as predicted; the jobs ahead start first';
  if (admit())
    return {
      predictedStart: { atMs: nowMs, afterJobs: [] },
      predictedStartNote: `${assumes}; it fits now and should start at the next scheduling round`,
    };
  const holders = views.filter((x) => x.shape !== null && !over(x));
  const timed = holders
    .filter((x) => x.plan.predictedCompletionTs !== null)
    .sort((a, b) => a.plan.predictedCompletionTs!.value - b.plan.predictedCompletionTs!.value);
  const after: string[] = [];
  for (const h of timed) {
    add(free, shapeNeed(h, h.shape!.ps, h.shape!.workers));
    after.push(h.id);
    if (admit())
      return {
        predictedStart: { atMs: Math.max(nowMs, h.plan.predictedCompletionTs!.value), afterJobs: after },
        predictedStartNote: assumes,
      };
  }
  const unknown = holders.length - timed.length;
  return {
    predictedStart: null,
    predictedStartNote:
      unknown > 0
        ? `${unknown} of the jobs holding resources ${unknown === 1 ? 'has' : 'have'} no predicted completion yet (models not fitted)`
        : 'it does not fit even once every running job has finished as predicted',
  };
}
