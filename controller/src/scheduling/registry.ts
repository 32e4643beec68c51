/**
 * The policy registry: the one place that maps a name to a policy. Callers (simulator, local
 * mode, Kubernetes controller) pick by name here; nothing else branches on a name. Ablations are
 * registered as their own compositions of parts.
 */
import { marginalGainAllocator } from './allocation/marginal-gain';
import { drfAllocator } from './allocation/drf';
import { fixedShapeAllocator, type FixedShapeOptions } from './allocation/fixed-shape';
import { tetrisAllocator } from './allocation/tetris';
import { composePolicy } from './compose';
import { optimusPolicy, type OptimusOptions } from './optimus';
import { alignmentPlacer } from './placement/alignment';
import { fewestServersPlacer } from './placement/fewest-servers';
import { spreadPlacer } from './placement/spread';
import type { Policy } from './types';

/** Options a caller may pass to any policy; each policy reads the ones that apply to it. */
export interface PolicyOptions extends OptimusOptions, FixedShapeOptions {}

export interface PolicyEntry {
  readonly description: string;
  build(options?: PolicyOptions): Policy;
}

const entry = (description: string, build: (o: PolicyOptions) => Policy): PolicyEntry => ({
  description,
  build: (o = {}) => build(o),
});

const pass = (o: PolicyOptions) => (o.passes === undefined ? {} : { passes: o.passes });

/** Every registered policy by name. */
export const POLICIES: Readonly<Record<string, PolicyEntry>> = {
  optimus: entry('Optimus: marginal-gain allocation, fewest-servers even placement, stragglers', (o) =>
    optimusPolicy(o),
  ),
  'optimus-allocation-only': entry(
    'Ablation: Optimus marginal-gain allocation with spreading placement',
    (o) =>
      composePolicy({
        name: 'optimus-allocation-only',
        description: 'Optimus allocation with the default spreading placement',
        allocator: marginalGainAllocator(o),
        placer: spreadPlacer(o),
        ...pass(o),
      }),
  ),
  'optimus-placement-only': entry('Ablation: DRF allocation with Optimus fewest-servers placement', (o) =>
    composePolicy({
      name: 'optimus-placement-only',
      description: 'DRF allocation with Optimus placement',
      allocator: drfAllocator(),
      placer: fewestServersPlacer(o),
      ...pass(o),
    }),
  ),
  drf: entry(
    'DRF (Ghodsi et al., NSDI 2011): work-conserving dominant-resource fairness, 1:1, spreading',
    (o) =>
      composePolicy({
        name: 'drf',
        needsSpeedModel: false,
        description: 'DRF',
        allocator: drfAllocator(),
        placer: spreadPlacer(o),
        ...pass(o),
      }),
  ),
  tetris: entry(
    'Tetris (Grandl et al., SIGCOMM 2014): alignment packing, shortest remaining first, 1:1',
    (o) =>
      composePolicy({
        name: 'tetris',
        description: 'Tetris',
        allocator: tetrisAllocator(),
        placer: alignmentPlacer(),
        ...pass(o),
      }),
  ),
  fifo: entry('FIFO: arrival order, fixed shape per job, head-of-line blocking, spreading', (o) =>
    composePolicy({
      name: 'fifo',
      needsSpeedModel: false,
      description: 'FIFO',
      allocator: fixedShapeAllocator({ ...o, order: 'fifo' }),
      placer: spreadPlacer(o),
      ...pass(o),
    }),
  ),
  srtf: entry('SRTF: shortest remaining time first, fixed shape per job, spreading', (o) =>
    composePolicy({
      name: 'srtf',
      needsSpeedModel: false,
      description: 'SRTF',
      allocator: fixedShapeAllocator({ ...o, order: 'srtf' }),
      placer: spreadPlacer(o),
      ...pass(o),
    }),
  ),
};

/** The registered names, sorted. */
export function policyNames(): string[] {
  return Object.keys(POLICIES).sort();
}

/** The policy registered as `name`; a clear error listing the names otherwise. */
export function getPolicy(name: string, options?: PolicyOptions): Policy {
  const found = Object.hasOwn(POLICIES, name) ? POLICIES[name] : undefined;
  if (!found) throw new Error(`unknown policy "${name}"; known policies: ${policyNames().join(', ')}`);
  return found.build(options);
}
