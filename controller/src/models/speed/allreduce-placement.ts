/**
 * Helpers between placements and the all-reduce speed model: how many servers a placement spans,
 * and the speed of w workers packed on the fewest servers (what the allocator asks before placing).
 */
import type { AllReduceSpeedModel } from './allreduce-types';
import type { SpeedPrediction } from './types';

/**
 * Distinct servers among the given per-worker server names (PS tasks, if any, are the caller's to
 * leave out). 0 for an empty list.
 * @example serversSpanned(['gpu-1', 'gpu-1', 'gpu-2']) // 2
 */
export function serversSpanned(workerServers: Iterable<string>): number {
  return new Set(workerServers).size;
}

/**
 * Servers that `workers` workers span when packed as tightly as possible on servers of
 * `slotsPerServer` worker slots each (e.g. GPUs per server): ⌈workers / slotsPerServer⌉.
 * @example packedServers(10, 4) // 3
 */
export function packedServers(workers: number, slotsPerServer: number): number {
  if (!(workers >= 1 && Number.isFinite(workers)))
    throw new RangeError(`packedServers: workers must be ≥ 1, got ${workers}`);
  if (!(slotsPerServer >= 1 && Number.isInteger(slotsPerServer)))
    throw new RangeError(`packedServers: slotsPerServer must be a positive integer, got ${slotsPerServer}`);
  // Never more servers than workers (the allocator may ask at a fractional worker count).
  return Math.min(Math.ceil(workers / slotsPerServer), Math.max(1, Math.floor(workers)));
}

/**
 * Predicted speed of `workers` workers packed on the fewest servers of `slotsPerServer` slots.
 * @example packedSpeed(model, 10, 4).stepsPerSec // = model.predict(10, 3).stepsPerSec
 */
export function packedSpeed(
  model: AllReduceSpeedModel,
  workers: number,
  slotsPerServer: number,
  localBatch?: number,
): SpeedPrediction {
  return model.predict(workers, packedServers(workers, slotsPerServer), localBatch);
}
