/**
 * The ground truth of PS load balance (paper §5.3), for the simulator. A trace job may carry its
 * model's parameter blocks (`parameterBlocks`: sizes in parameters, one per kvstore key); the
 * measured speeds are those of MXNet's default assignment (every measurement was an MXNet run).
 *
 * Model: in a step every PS receives its share of the gradients and answers with its share of
 * the weights, so the communication part of the step lasts as long as the busiest PS needs:
 * load_i = size_i + requestCost · requests_i (parameters, plus a per-request overhead expressed
 * in parameters), and comm ∝ max_i load_i. Relative to the default assignment, another
 * assignment (PAA) scales the communication share c of the step by L / L_default:
 *
 *   speed factor = 1 / (1 − c · (1 − L / L_default))
 *
 * so a job whose step is all computation gains nothing, and balancing a PS that is twice as
 * loaded as the others on a communication-bound job nearly doubles its speed. With one PS every
 * assignment is the same (factor 1). Pure.
 */
import { assignParameters, defaultMxnetAssignment, summarizeAssignment } from '../scheduling/paa';
import type { Assignment, ParameterBlock } from '../scheduling/paa';

export type AssignmentRule = 'paa' | 'mxnet-default';

/** Default per-request overhead, in parameters (≈ 0.1 ms of a 1 GbE link at 4 B/param). */
export const DEFAULT_REQUEST_COST = 25_000;

export interface BlockFactorInput {
  readonly blocks: readonly ParameterBlock[];
  readonly ps: number;
  /** 0..1: the communication share of the step at this shape (`speed-truth.ts` commShare). */
  readonly commShare: number;
  readonly rule: AssignmentRule;
  readonly requestCost?: number;
  /** Seed of MXNet's random choice for small blocks (default 0). */
  readonly seed?: number;
}

/** The busiest PS's load of an assignment (see the file comment). */
export function busiestLoad(assignment: Assignment, requestCost = DEFAULT_REQUEST_COST): number {
  const s = summarizeAssignment(assignment);
  let max = 0;
  for (let i = 0; i < s.ps; i++) max = Math.max(max, (s.sizes[i] ?? 0) + requestCost * (s.requests[i] ?? 0));
  return max;
}

function assign(o: BlockFactorInput, rule: AssignmentRule): Assignment {
  return rule === 'paa'
    ? assignParameters(o.blocks, o.ps)
    : defaultMxnetAssignment(o.blocks, o.ps, o.seed ?? 0);
}

/** Speed multiplier of the job at `ps` PS under `rule`, relative to the measured (default) speed. */
export function parameterBlockFactor(o: BlockFactorInput): number {
  if (o.blocks.length === 0 || o.ps <= 1 || o.commShare <= 0) return 1;
  const cost = o.requestCost ?? DEFAULT_REQUEST_COST;
  const base = busiestLoad(assign(o, 'mxnet-default'), cost);
  const load = o.rule === 'mxnet-default' ? base : busiestLoad(assign(o, o.rule), cost);
  if (!(base > 0)) return 1;
  const c = Math.min(Math.max(o.commShare, 0), 1);
  return 1 / Math.max(1 - c * (1 - load / base), 0.05);
}

/**
 * A per-job cache of `parameterBlockFactor` by PS count (the assignment depends only on p, the
 * factor on p and the comm share): what a simulator backend keeps per job.
 */
export function blockFactorCache(
  o: Omit<BlockFactorInput, 'ps' | 'commShare'>,
): (ps: number, commShare: number) => number {
  const ratio = new Map<number, number>();
  return (ps, commShare) => {
    if (o.blocks.length === 0 || ps <= 1 || commShare <= 0) return 1;
    let r = ratio.get(ps);
    if (r === undefined) {
      const cost = o.requestCost ?? DEFAULT_REQUEST_COST;
      const base = busiestLoad(assign({ ...o, ps, commShare }, 'mxnet-default'), cost);
      r =
        o.rule === 'mxnet-default' || !(base > 0)
          ? 1
          : busiestLoad(assign({ ...o, ps, commShare }, o.rule), cost) / base;
      ratio.set(ps, r);
    }
    return 1 / Math.max(1 - Math.min(Math.max(commShare, 0), 1) * (1 - r), 0.05);
  };
}
