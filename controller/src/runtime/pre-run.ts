/**
 * The paper's pre-run (§3.2): before a job is scheduled, it runs briefly at a handful of
 * shapes to seed its speed model. Its defaults and seed here; where a sample runs is placement
 * (`scheduling/placement/pre-run-placement.ts`).
 */
/**
 * The pre-run's defaults: how many sample shapes (the paper ran 5) and how large they may be.
 * In the simulator (paper workload, 5 seeds, through this loop) every sample beyond the first costs
 * more than its better first fit gains: avg JCT 1,270 s without a pre-run, 1,267 s with one sample
 * (1×1), 1,433 s with 2, 1,493 s with 4 (ADR 0009). One sample is the default: the job's first
 * decision starts from a measured speed at no cost over none. A sample ends after this many speed
 * records per worker (each a Speedometer average of its batches; the warm-up one is not counted).
 */
export const PRE_RUN_DEFAULTS = { budget: 1, maxPs: 2, maxWorkers: 3, recordsPerWorker: 1 } as const;

/** A small stable hash of a job id, to seed its sample-shape choice. */
export function seedOf(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i += 1) h = Math.imul(h ^ id.charCodeAt(i), 16777619) >>> 0;
  return h;
}
