/**
 * The law of the all-reduce speed model (ADR 0026). One synchronous step of data-parallel training
 * computes the per-worker batch m (C = a + b·m) and ring-all-reduces the gradients (S), and DDP
 * overlaps the two in part. Pollux combines them as a γ-norm (C^γ + S^γ)^(1/γ); its measurements
 * put γ near 2 for the models where overlap matters. At γ = 2 the square of the step time is a sum
 * of squares, and expanding the squares gives a law that is LINEAR in non-negative coefficients:
 *
 *   T² = θ₁ + θ₂·m + θ₃·m²                                       compute, (a + b·m)²
 *      + [w > 1]·(θ₄ + θ₅·r + θ₆·r²)                             ring on any link, (s + q·r)²
 *      + [n > 1]·(θ₇ + θ₈·r + θ₉·r²)      r = max(w − 2, 0)       extra when the ring leaves a server
 *
 * so it is fitted by non-negative least squares like the PS model. Every θ ≥ 0 makes the step time
 * non-decreasing in m, in w at fixed m and in n, positive and finite for any valid shape; the sync
 * part grows at most linearly in w beyond the measured range (the ring's per-hop cost), and
 * spanning more than two servers costs nothing more (the ring crosses the network either way).
 */

/** Names of the terms, in column order (the keys of a fitted model's `coefficients`). */
export const ALLREDUCE_TERMS = [
  'compute',
  'compute*m',
  'compute*m^2',
  'ring',
  'ring*r',
  'ring*r^2',
  'network',
  'network*r',
  'network*r^2',
] as const;
export type AllReduceTerm = (typeof ALLREDUCE_TERMS)[number];
export const ALLREDUCE_DIM = ALLREDUCE_TERMS.length;

/** Writes the terms of a shape into `out` at `offset` (no allocation: fits and predictions loop). */
export function writeAllReduceTerms(
  workers: number,
  servers: number,
  localBatch: number,
  out: Float64Array,
  offset = 0,
): void {
  const r = Math.max(workers - 2, 0);
  const ring = workers > 1 ? 1 : 0;
  const net = servers > 1 ? 1 : 0;
  out[offset] = 1;
  out[offset + 1] = localBatch;
  out[offset + 2] = localBatch * localBatch;
  out[offset + 3] = ring;
  out[offset + 4] = ring * r;
  out[offset + 5] = ring * r * r;
  out[offset + 6] = net;
  out[offset + 7] = net * r;
  out[offset + 8] = net * r * r;
}

/** Index of the first ring term and of the first network term. */
const RING = 3;
const NETWORK = 6;

/** What a set of samples can tell apart: per term, whether it enters the fit. */
export interface TermSupport {
  readonly active: readonly boolean[];
}

/**
 * Which terms the samples support. A term that is zero on every sample is left out (its coefficient
 * stays 0). A ring term is also left out when no sample runs on ONE server with that term non-zero:
 * on multi-server samples alone the ring and network terms are the same column, and the prior puts
 * that cost on the network (sync inside a server is free until seen) — optimistic, as Pollux's
 * prior-driven exploration, and physically the likely split (NVLink/PCIe ≫ the network).
 */
export function termSupport(
  rows: readonly { readonly workers: number; readonly servers: number; readonly localBatch: number }[],
): TermSupport {
  const active = new Array<boolean>(ALLREDUCE_DIM).fill(false);
  const terms = new Float64Array(ALLREDUCE_DIM);
  for (const row of rows) {
    writeAllReduceTerms(row.workers, row.servers, row.localBatch, terms);
    for (let j = 0; j < ALLREDUCE_DIM; j++) {
      if ((terms[j] as number) === 0) continue;
      if (j >= RING && j < NETWORK && row.servers > 1) continue;
      active[j] = true;
    }
  }
  return { active };
}

/** The squared step time of the law at a shape. */
export function squaredStepTime(
  theta: ArrayLike<number>,
  workers: number,
  servers: number,
  localBatch: number,
  scratch: Float64Array,
): number {
  writeAllReduceTerms(workers, servers, localBatch, scratch);
  let t2 = 0;
  for (let j = 0; j < ALLREDUCE_DIM; j++) t2 += (scratch[j] as number) * (theta[j] as number);
  return t2;
}
