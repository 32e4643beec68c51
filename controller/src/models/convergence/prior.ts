/**
 * Remaining work before the convergence model can answer: the runtime's prior, shared by the runtime
 * (`runtime/refit.ts`) and `eval convergence` (which scores an abstention with what a scheduler would
 * then really be told).
 */

/** The simulator's prior, in epochs: its jobs declare an epoch bound of twice this (`sim/engine.ts`). */
export const SIM_PRIOR_EPOCHS = 20;

/** Half of what the user's bound leaves, with the interval [0, all of it]. */
export function priorRemaining(
  priorTotal: number,
  done: number,
): { readonly steps: number; readonly lower: number; readonly upper: number } {
  const rest = Math.max(0, priorTotal - done);
  return { steps: rest / 2, lower: 0, upper: rest };
}
