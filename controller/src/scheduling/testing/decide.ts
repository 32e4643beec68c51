/** Test helpers: run a registered policy and look at its decision by job id. */
import { getPolicy, type PolicyOptions } from '../registry';
import type { JobDecision, PolicyInput } from '../types';

export type RunDecision = Extract<JobDecision, { action: 'run' }>;

/** Decides with the named policy and indexes the result by job id. */
export function decideBy(
  name: string,
  input: PolicyInput,
  options?: PolicyOptions,
): Map<string, JobDecision> {
  return new Map(
    getPolicy(name, options)
      .decide(input)
      .jobs.map((d) => [d.jobId, d]),
  );
}

/** The run decision of `id`, or a thrown error naming what happened instead. */
export function running(decisions: ReadonlyMap<string, JobDecision>, id: string): RunDecision {
  const d = decisions.get(id);
  if (!d) throw new Error(`no decision for ${id}`);
  if (d.action !== 'run') throw new Error(`${id} waits: ${d.reason}`);
  return d;
}

/** Compact shape, e.g. "2+3" for 2 PS and 3 workers, or "wait". */
export function shapeOf(decisions: ReadonlyMap<string, JobDecision>, id: string): string {
  const d = decisions.get(id);
  return d?.action === 'run' ? `${d.shape.ps}+${d.shape.workers}` : 'wait';
}
