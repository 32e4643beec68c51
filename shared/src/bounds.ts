/**
 * Physical bounds of every figure on the wire. A value outside them cannot come from a real training
 * job, so a record carrying one is refused at the boundary (counted as `out-of-range`, by field), and
 * nothing downstream has to defend against it. The bounds are generous on purpose: a job at the edge
 * of what hardware can do today must still fit with orders of magnitude to spare.
 *
 * The sidecar turns a figure outside these bounds into `null` (or drops the metric) instead of
 * publishing a record the controller would refuse.
 */
export const BOUNDS = {
  /** Per-task sequence numbers are JavaScript safe integers (the sidecar seeds them from ms × 1000). */
  seq: { min: 0, max: Number.MAX_SAFE_INTEGER },
  /** Milliseconds since the Unix epoch, up to the year 2286. */
  ts: { min: 0, max: 1e13 },
  /** A million epochs: far beyond any schedule (ImageNet runs take ~100). */
  epoch: { min: 0, max: 1_000_000 },
  /** Batch index within an epoch. */
  batch: { min: 0, max: 1_000_000_000 },
  /** Samples per second of one task. */
  samplesPerSec: { min: 0, max: 1e9 },
  /** Seconds per step: at most a week. */
  stepTime: { min: 0, max: 604_800 },
  /** Loss and metric values (perplexities and unnormalised errors can be large, never this large). */
  value: { min: -1e15, max: 1e15 },
  /** Metrics per record, and characters per metric or loss name. */
  metricCount: { min: 0, max: 64 },
  nameLength: { min: 0, max: 128 },
} as const;

export type BoundedField = keyof typeof BOUNDS;

/** True when `v` is a finite number inside the field's bounds. */
export const inBounds = (field: BoundedField, v: number): boolean =>
  Number.isFinite(v) && v >= BOUNDS[field].min && v <= BOUNDS[field].max;

/** `v` when it lies inside the field's bounds, else null: how the sidecar treats an impossible figure. */
export const boundedOrNull = (field: BoundedField, v: number | null): number | null =>
  v !== null && inBounds(field, v) ? v : null;

/** Clamps a derived figure into [lo, hi]; NaN becomes `lo`. Models use it on what they compute. */
export const clamp = (v: number, lo: number, hi: number): number => (v > lo ? (v < hi ? v : hi) : lo);
