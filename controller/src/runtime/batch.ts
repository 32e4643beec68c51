/**
 * What a job's `batchSize` means, in one place (paper §3: M is the global batch in sync mode).
 *
 * - `sync` (`dist_sync`): `batchSize` is the GLOBAL batch of one step, summed over all workers.
 *   Each of `w` workers processes ⌊batchSize / w⌋ samples per step, so a resize keeps the step's
 *   statistics (learning rate, convergence) the same; the remainder (< w samples) is dropped.
 * - `async` (`dist_async`): `batchSize` is the batch of one worker's step; workers step on their own.
 *
 * Every conversion goes through {@link perWorkerBatch}: the value the training container gets as
 * `OPTIMUS_BATCH_SIZE`, the value the sidecar turns step times into samples/s with
 * (`optimus.dev/batch-size`), and the value the controller turns samples/s back into steps/s with.
 * Using one function on both sides is what makes a log with only step times (Keras, Lightning)
 * report the right speed: the ratio cancels.
 */
export type BatchMode = 'sync' | 'async';

/**
 * Samples one worker processes per step: an integer ≥ 1.
 *
 * @example
 * perWorkerBatch('sync', 256, 4); // 64
 * perWorkerBatch('sync', 256, 3); // 85 (the global batch is really 255)
 * perWorkerBatch('async', 64, 4); // 64
 */
export function perWorkerBatch(mode: BatchMode, batchSize: number, workers: number): number {
  if (!Number.isFinite(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize must be ≥ 1, got ${batchSize}`);
  if (mode === 'async') return Math.floor(batchSize);
  return Math.max(1, Math.floor(batchSize / Math.max(1, Math.floor(workers))));
}

/** Samples one step of the whole job processes: what `batchSize` really buys at `workers` workers. */
export function effectiveGlobalBatch(mode: BatchMode, batchSize: number, workers: number): number {
  const w = Math.max(1, Math.floor(workers));
  return mode === 'sync' ? perWorkerBatch(mode, batchSize, w) * w : Math.floor(batchSize);
}
