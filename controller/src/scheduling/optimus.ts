/**
 * The Optimus policy (Peng et al., EuroSys 2018): marginal-gain allocation (§4.1), fewest-servers
 * even placement (§4.2), straggler replacement (§5.2). Beyond the paper (see README.md): the
 * resize-cost rules that keep running jobs from churning, a relative gain with a PS + worker
 * look-ahead, and a placer that never strands GPUs and shrinks a shape rather than make the job
 * wait. `optimus-paper.ts` turns every one of them off.
 */
import { marginalGainAllocator, type MarginalGainOptions } from './allocation/marginal-gain';
import { composePolicy } from './compose';
import type { Allocator, Placer } from './core/parts';
import { fewestServersPlacer, type FewestServersOptions } from './placement/fewest-servers';
import type { StragglerOptions } from './stragglers';
import type { Policy } from './types';

export interface OptimusOptions extends MarginalGainOptions, FewestServersOptions {
  /** Straggler rule options, or false to disable replacement. */
  readonly stragglers?: StragglerOptions | false;
  /** Allocation + placement passes per round (default 3). */
  readonly passes?: number;
  /** How jobs assign parameter blocks to their PS (default 'paa', the paper's §5.3). */
  readonly parameterAssignment?: 'paa' | 'mxnet-default';
  /** A running job that shrinks keeps its remaining tasks where they are (default true). */
  readonly keepShrunk?: boolean;
  /** A job left waiting gets its minimum shape where room is left (`compose.ts` phase 6; default true). */
  readonly backfill?: boolean;
}

/** The name and description a composed Optimus variant carries. */
export interface PolicyLabel {
  readonly name: string;
  readonly description: string;
}

const OPTIMUS_LABEL: PolicyLabel = {
  name: 'optimus',
  description: 'Optimus: marginal-gain allocation, fewest-servers even placement, straggler replacement',
};

/** The two parts of Optimus, for benchmarks that time them separately. */
export function optimusParts(options: OptimusOptions = {}): { allocator: Allocator; placer: Placer } {
  return { allocator: marginalGainAllocator(options), placer: fewestServersPlacer(options) };
}

export function optimusPolicy(options: OptimusOptions = {}, label: PolicyLabel = OPTIMUS_LABEL): Policy {
  return composePolicy({
    ...label,
    ...optimusParts(options),
    stragglers: options.stragglers ?? {},
    keepShrunk: options.keepShrunk ?? true,
    backfill: options.backfill ?? true,
    parameterAssignment: options.parameterAssignment ?? 'paa',
    ...(options.passes === undefined ? {} : { passes: options.passes }),
  });
}
