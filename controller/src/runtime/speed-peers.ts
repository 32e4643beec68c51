/**
 * Jobs that declare the same model and run in the same mode at the same batch size run at the same
 * speed per shape: each one's measured speeds seed the others' speed models (ADR 0021). Built once
 * per round from the jobs in memory, running or finished.
 */
import type { SpeedSample } from '../models/speed/types';
import type { JobEntry } from './job-entry';
import type { JobSpec } from './job-spec';

/** The speed class of a job, or null when it declares no model (it then shares nothing). */
export function speedClassOf(spec: Pick<JobSpec, 'model' | 'mode' | 'batchSize'>): string | null {
  return spec.model === undefined ? null : `${spec.model}|${spec.mode}|${spec.batchSize}`;
}

interface Pool {
  /** Per shape: Σ speed·weight and Σ weight over the class. */
  readonly shapes: Map<string, { ps: number; workers: number; total: number; weight: number }>;
  version: number;
  /** Each member's own samples and version (subtracted again for that member). */
  readonly members: Map<JobEntry, { samples: readonly SpeedSample[]; version: number }>;
}

const shapeKey = (s: { ps: number; workers: number }): string => `${s.ps}x${s.workers}`;

/** Each job's samples are read once per round; a job's view of its peers is the class minus itself. */
export class SpeedPeers {
  private built: Map<string, Pool> | null = null;

  constructor(private readonly entries: Iterable<JobEntry>) {}

  /** The classes, built on the first question of the round (nothing is read when none comes). */
  private get pools(): Map<string, Pool> {
    this.built ??= poolsOf(this.entries);
    return this.built;
  }

  private poolOf(e: JobEntry): Pool | null {
    const k = speedClassOf(e.rec.spec);
    return k === null ? null : (this.pools.get(k) ?? null);
  }

  /** Moves whenever a peer's observations do: a job's fit is stale then. */
  version(e: JobEntry): number {
    const pool = this.poolOf(e);
    return pool === null ? 0 : pool.version - (pool.members.get(e)?.version ?? 0);
  }

  /** The peers' speeds, pooled per shape (weights summed), without the job's own. */
  samples(e: JobEntry): SpeedSample[] {
    const pool = this.poolOf(e);
    if (pool === null) return [];
    const own = new Map((pool.members.get(e)?.samples ?? []).map((s) => [shapeKey(s), s]));
    const out: SpeedSample[] = [];
    for (const [k, acc] of pool.shapes) {
      const mine = own.get(k);
      const w = mine?.weight ?? (mine ? 1 : 0);
      const total = acc.total - (mine ? mine.stepsPerSec * w : 0);
      const weight = acc.weight - w;
      if (weight > 1e-9) out.push({ ps: acc.ps, workers: acc.workers, stepsPerSec: total / weight, weight });
    }
    return out;
  }

  /** Distinct shapes the peers measured. */
  shapes(e: JobEntry): number {
    return this.samples(e).length;
  }
}

function poolsOf(entries: Iterable<JobEntry>): Map<string, Pool> {
  const pools = new Map<string, Pool>();
  for (const e of entries) {
    const k = speedClassOf(e.rec.spec);
    if (k === null) continue;
    let pool = pools.get(k);
    if (!pool) {
      pool = { shapes: new Map(), version: 0, members: new Map() };
      pools.set(k, pool);
    }
    const samples = e.obs.speedSamples(e.rec.spans);
    const version = e.obs.version + e.rec.spans.length;
    pool.members.set(e, { samples, version });
    pool.version += version;
    for (const x of samples) {
      const acc = pool.shapes.get(shapeKey(x)) ?? { ps: x.ps, workers: x.workers, total: 0, weight: 0 };
      const w = x.weight ?? 1;
      acc.total += x.stepsPerSec * w;
      acc.weight += w;
      pool.shapes.set(shapeKey(x), acc);
    }
  }
  return pools;
}
