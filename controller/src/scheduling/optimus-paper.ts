/**
 * Optimus as the paper describes it (Peng et al., EuroSys 2018), none of this project's rules:
 *
 * - allocation, §4.1 / Eq. 9: every job first gets its minimum shape (1 PS + 1 worker); then the
 *   greedy loop adds the task (a PS or a worker) of the job whose gain — seconds of remaining
 *   time saved, divided by the task's dominant share — is largest, recomputing only that job,
 *   until every gain is ≤ 0 or no task fits the free pool. No restart pause in the time, no
 *   resize rule, no protection, no PS + worker look-ahead, seconds rather than relative gain.
 *   One reading kept from the digest (reference §4, step 4): a task that no longer fits ends only
 *   its job's growth, the others go on (the prototype stopped the whole loop).
 * - placement, §4.2 / Theorem 1: jobs in ascending order of total demand; each on the smallest
 *   k (k = 1, 2, …) of the k roomiest servers holding an even split of its PS and workers. No
 *   stranding guard, no shrink-to-fit, no backfill; a job whose shape changed is placed afresh.
 *   One concession, without which the algorithm does not run on the paper's own heterogeneous
 *   testbed: when no even split fits, PS and workers are packed by role (`pack-by-role.ts`)
 *   before the job waits. Strictly (`unevenFallback: false`) an even split must put every PS
 *   beside workers on GPU servers; the allocator, sizing shapes against the aggregate pool, hands
 *   out more PS than those servers' CPUs hold, no job fits, and since every round repeats the
 *   same decision nothing ever runs again (measured: the paper workload stalls at t ≈ 30,600 s
 *   with 19 jobs left; `simulate --ablation` reports it as "optimus-paper strict").
 * - stragglers, §5.2: replaced, as in ours.
 *
 * Options given by the caller override these, so "the paper plus one of our rules" is a policy
 * option away (`--policy-option shrink=true`).
 */
import { optimusPolicy, type OptimusOptions } from './optimus';
import type { Policy } from './types';

/** The allocator half of `PAPER_OPTIONS`. */
export const PAPER_ALLOCATOR_OPTIONS = {
  gain: 'seconds',
  lookAhead: false,
  resizeCost: false,
} as const satisfies OptimusOptions;

/** The placer half of `PAPER_OPTIONS` (keep-shrunk belongs to placement: it decides where tasks go). */
export const PAPER_PLACER_OPTIONS = {
  shrink: false,
  strandingGuard: false,
  evenSearch: 'all',
  slack: 0,
  keepShrunk: false,
  backfill: false,
} as const satisfies OptimusOptions;

/** The options that make `optimusPolicy` the paper's algorithm: both halves. */
export const PAPER_OPTIONS = {
  ...PAPER_ALLOCATOR_OPTIONS,
  ...PAPER_PLACER_OPTIONS,
} as const satisfies OptimusOptions;

export function optimusPaperPolicy(options: OptimusOptions = {}): Policy {
  return optimusPolicy(
    { ...PAPER_OPTIONS, ...options },
    {
      name: 'optimus-paper',
      description: 'Optimus as the paper has it: Eq. 9 greedy gain in seconds, Theorem 1 even placement',
    },
  );
}
