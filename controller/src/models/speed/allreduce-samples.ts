/** Validation of all-reduce samples and shapes (bad input gets a clear error, never a NaN model). */
import type { AllReduceFitOptions, AllReduceSample } from './allreduce-types';

const positive = (x: number | undefined): boolean => x !== undefined && x > 0 && x < Infinity;

/** The message for an invalid sample, or undefined when it is fine. */
function problemOf(s: AllReduceSample): string | undefined {
  if (!Number.isInteger(s.workers) || s.workers < 1)
    return `workers must be a positive integer, got ${s.workers}`;
  if (!Number.isInteger(s.servers) || s.servers < 1 || s.servers > s.workers)
    return `servers must be an integer in 1..workers (${s.workers}), got ${s.servers}`;
  if (!positive(s.stepsPerSec)) return `stepsPerSec must be a positive number, got ${s.stepsPerSec}`;
  if (s.localBatch !== undefined && !positive(s.localBatch))
    return `localBatch must be a positive number, got ${s.localBatch}`;
  if (s.weight !== undefined && !positive(s.weight))
    return `weight must be a positive number, got ${s.weight}`;
  return undefined;
}

/** Throws a RangeError naming the first invalid sample (or a bad global batch). */
export function checkAllReduceSamples(samples: readonly AllReduceSample[], opts: AllReduceFitOptions): void {
  if (opts.globalBatch !== undefined && !positive(opts.globalBatch))
    throw new RangeError(`globalBatch must be a positive number, got ${opts.globalBatch}`);
  samples.forEach((s, i) => {
    const problem = problemOf(s);
    if (problem !== undefined) throw new RangeError(`all-reduce speed sample #${i}: ${problem}`);
  });
}

/** Checks a shape passed to `predict` (reals allowed: the allocator may ask between integers). */
export function checkAllReduceShape(workers: number, servers: number, localBatch?: number): void {
  if (!(workers >= 1 && servers >= 1 && servers <= workers && Number.isFinite(workers))) {
    throw new RangeError(
      `all-reduce speed model: a shape needs workers ≥ 1 and 1 ≤ servers ≤ workers, got (${workers}, ${servers})`,
    );
  }
  if (localBatch !== undefined && !positive(localBatch))
    throw new RangeError(`all-reduce speed model: localBatch must be a positive number, got ${localBatch}`);
}

/** Samples one worker computes per step: given, else global batch ÷ workers, else 1 ÷ workers. */
export function perWorkerBatch(workers: number, localBatch?: number, globalBatch?: number): number {
  return localBatch ?? (globalBatch ?? 1) / workers;
}
