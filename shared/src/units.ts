/**
 * Units used across the wire and the core. Times on the wire are milliseconds since the
 * epoch (`ts`); durations in the models are seconds; speeds are steps per second.
 * Resources use Kubernetes names and base units: `cpu` in cores, `memory` in bytes,
 * `nvidia.com/gpu` in devices.
 */
export const RESOURCE_CPU = 'cpu' as const;
export const RESOURCE_MEMORY = 'memory' as const;
export const RESOURCE_GPU = 'nvidia.com/gpu' as const;

/** A resource vector: Kubernetes resource name → amount in base units. */
export type Resources = Readonly<Record<string, number>>;

export const GiB = 1024 ** 3;
export const MS_PER_SECOND = 1000;

/** Samples/s of one worker → steps/s, given that worker's per-step batch. */
export const stepsPerSecFromSamples = (samplesPerSec: number, perWorkerBatch: number): number =>
  perWorkerBatch > 0 ? samplesPerSec / perWorkerBatch : 0;
