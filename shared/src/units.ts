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

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/**
 * Bytes in the largest binary unit that keeps the figure ≥ 1, three significant digits.
 * @example formatBytes(2) // "2 B"
 * @example formatBytes(2 * GiB) // "2 GiB"
 * @example formatBytes(1.5 * 1024 ** 2) // "1.5 MiB"
 */
export function formatBytes(bytes: number): string {
  let v = bytes;
  let unit = 0;
  while (Math.abs(v) >= 1024 && unit < BINARY_UNITS.length - 1) {
    v /= 1024;
    unit += 1;
  }
  return `${+v.toPrecision(3)} ${BINARY_UNITS[unit]}`;
}

/**
 * An amount of a resource with its unit: `memory` in binary byte units, `cpu` in cores, anything
 * else (GPUs) as a count.
 * @example formatAmount('memory', 2) // "2 B"
 * @example formatAmount('cpu', 0.5) // "0.5 cores"
 */
export function formatAmount(resource: string, amount: number): string {
  if (resource === RESOURCE_MEMORY) return formatBytes(amount);
  const n = +amount.toFixed(3);
  if (resource === RESOURCE_CPU) return `${n} ${n === 1 ? 'core' : 'cores'}`;
  return String(n);
}
