/**
 * The restart pause measured on real trainers (`npm run bench:restart -- --out
 * test/data/restart-cost.json`): SIGTERM → checkpoint → exit → new processes → first step of the
 * PyTorch reference trainers, per kind. `simulate --restart-pause measured[:kind]` takes the median of
 * one kind's resizes (default: every parameter-server resize, sync and async, as the simulated
 * workloads are PS jobs of both modes) as its one pause for every resize, in place of the 30 s guess.
 * It is one machine's figure (its cpus are in the file); a per-model pause scaled by checkpoint size
 * is in the file too (`kinds.*.secondsPerMB`) but the engine takes one pause for every job.
 */
import { median } from 'simple-statistics';
import { z } from 'zod';

const resizeSchema = z.object({
  kind: z.string().min(1),
  total: z.number().nonnegative(),
});

export const restartCostSchema = z.object({
  generatedBy: z.string(),
  machine: z.object({ cpus: z.number() }).passthrough(),
  resizes: z.array(resizeSchema).min(1),
});
export type RestartCost = z.infer<typeof restartCostSchema>;

/** The kinds `measured` pools when none is named: the simulated jobs are parameter-server jobs. */
export const PS_KINDS = ['ps-sync', 'ps-async'] as const;

/** True for `measured` and `measured:<kind>`: a pause the restart-cost file gives. */
export const isMeasuredPause = (value: string): boolean => /^measured(:.+)?$/.test(value);

/**
 * The pause, in seconds, of `measured` (every PS resize) or `measured:<kind>` (`allreduce`,
 * `ps-sync`, `ps-async`): the median total restart of those resizes. Unknown kinds name the known.
 */
export function measuredPause(doc: RestartCost, spec: string): number {
  const kind = spec.startsWith('measured:') ? spec.slice('measured:'.length) : null;
  const kinds: readonly string[] = kind === null ? PS_KINDS : [kind];
  const totals = doc.resizes.filter((r) => kinds.includes(r.kind)).map((r) => r.total);
  if (totals.length === 0) {
    const known = [...new Set(doc.resizes.map((r) => r.kind))].join(', ');
    throw new Error(`--restart-pause ${spec}: no ${kinds.join('/')} resize measured; measured: ${known}`);
  }
  return median(totals);
}
