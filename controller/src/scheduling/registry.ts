/**
 * The policy registry: the one place that maps a name to a policy. Callers (simulator, local
 * mode, Kubernetes controller) pick by name here; nothing else branches on a name. Ablations are
 * registered as their own compositions of parts, or reached with options (`PolicyOptions`).
 */
import { marginalGainAllocator } from './allocation/marginal-gain';
import { drfAllocator } from './allocation/drf';
import { fixedShapeAllocator, type FixedShapeOptions } from './allocation/fixed-shape';
import { tetrisAllocator, type TetrisOptions } from './allocation/tetris';
import { tiresiasAllocator, type TiresiasOptions } from './allocation/tiresias';
import { composePolicy, type ComposeOptions } from './compose';
import { optimusPolicy, type OptimusOptions } from './optimus';
import { optimusPaperPolicy, PAPER_ALLOCATOR_OPTIONS, PAPER_PLACER_OPTIONS } from './optimus-paper';
import { alignmentPlacer } from './placement/alignment';
import { fewestServersPlacer } from './placement/fewest-servers';
import { progressiveSpreadPlacer } from './placement/progressive-spread';
import { spreadPlacer } from './placement/spread';
import { tetrisPackingPlacer } from './placement/tetris-packing';
import type { Policy } from './types';

/** Options a caller may pass to any policy; each policy reads the ones that apply to it. */
export interface PolicyOptions extends OptimusOptions, FixedShapeOptions, TetrisOptions, TiresiasOptions {}

export interface PolicyEntry {
  readonly description: string;
  build(options?: PolicyOptions): Policy;
}

const entry = (description: string, build: (o: PolicyOptions) => Policy): PolicyEntry => ({
  description,
  build: (o = {}) => build(o),
});

const pass = (o: PolicyOptions) => (o.passes === undefined ? {} : { passes: o.passes });

/** A baseline whose parts do not depend on the name: allocator + placer, the name as a label. */
function baseline(name: string, description: string, parts: (o: PolicyOptions) => Parts) {
  return entry(description, (o) => composePolicy({ ...parts(o), name, description, ...pass(o) }));
}
type Parts = Pick<ComposeOptions, 'allocator' | 'placer' | 'needsSpeedModel' | 'backfill'>;

/** Every registered policy by name. */
export const POLICIES: Readonly<Record<string, PolicyEntry>> = {
  optimus: entry('Optimus: marginal-gain allocation, fewest-servers even placement, stragglers', (o) =>
    optimusPolicy(o),
  ),
  'optimus-paper': entry(
    "The paper's Optimus (Eq. 9 greedy gain in seconds, Theorem 1 even placement), none of our rules",
    (o) => optimusPaperPolicy(o),
  ),
  'optimus-paper-allocator': entry("Ablation: the paper's allocator with our placement", (o) =>
    optimusPolicy(
      { ...PAPER_ALLOCATOR_OPTIONS, ...o },
      { name: 'optimus-paper-allocator', description: "the paper's allocator, our placement" },
    ),
  ),
  'optimus-paper-placer': entry("Ablation: our allocator with the paper's placement", (o) =>
    optimusPolicy(
      { ...PAPER_PLACER_OPTIONS, ...o },
      { name: 'optimus-paper-placer', description: "our allocator, the paper's placement" },
    ),
  ),
  'optimus-allocation-only': baseline(
    'optimus-allocation-only',
    'Ablation: Optimus marginal-gain allocation with spreading placement',
    (o) => ({ allocator: marginalGainAllocator(o), placer: spreadPlacer(o) }),
  ),
  'optimus-placement-only': baseline(
    'optimus-placement-only',
    'Ablation: DRF allocation with Optimus fewest-servers placement',
    (o) => ({
      needsSpeedModel: false,
      allocator: drfAllocator(),
      placer: fewestServersPlacer(o),
    }),
  ),
  drf: baseline(
    'drf',
    'DRF (Ghodsi et al., NSDI 2011): progressive filling 1:1 on the servers, first bundle for every job, Kubernetes spread',
    (o) => ({
      needsSpeedModel: false,
      allocator: drfAllocator(),
      placer: progressiveSpreadPlacer({ ...o, growth: 'dominant-share' }),
    }),
  ),
  'drf-gang': baseline(
    'drf-gang',
    'The earlier DRF: shapes sized against the aggregate pool, then spread as whole gangs (newcomers can starve)',
    (o) => ({
      needsSpeedModel: false,
      backfill: false,
      allocator: drfAllocator(),
      placer: spreadPlacer(o),
    }),
  ),
  tetris: baseline(
    'tetris',
    'Tetris (Grandl et al., SIGCOMM 2014): shortest remaining first, 1:1 pairs while the estimate may speed up, placed one at a time by packing score + ε·remaining time (m = 1), first bundle for every job',
    (o) => ({
      allocator: tetrisAllocator(o),
      placer: tetrisPackingPlacer(o),
    }),
  ),
  'tetris-gang': baseline(
    'tetris-gang',
    'The earlier Tetris: shapes sized against the aggregate pool by point estimates, placed as whole gangs by alignment (jobs can wait beside free room)',
    (o) => ({
      backfill: false,
      allocator: tetrisAllocator({ ...o, speedUp: 'point' }),
      placer: alignmentPlacer(),
    }),
  ),
  tiresias: baseline(
    'tiresias',
    'Tiresias (Gu et al., NSDI 2019): discretised 2D-LAS on attained GPU-seconds (2 queues, 3,600 GPU-s, PROMOTEKNOB 8), fixed shape, preemptive, fit-first, spreading',
    (o) => ({
      needsSpeedModel: false,
      allocator: tiresiasAllocator(o),
      placer: progressiveSpreadPlacer({ ...o, growth: 'none' }),
    }),
  ),
  fifo: baseline(
    'fifo',
    'FIFO: arrival order, fixed shape per job (1+1), head-of-line blocking, spreading',
    (o) => ({
      needsSpeedModel: false,
      backfill: false,
      allocator: fixedShapeAllocator({ ...o, order: 'fifo' }),
      placer: spreadPlacer(o),
    }),
  ),
  'fifo-fill': baseline(
    'fifo-fill',
    'FIFO, filling the head of the queue 1:1 to its maximum before the next job (DL2 simulator), spreading',
    (o) => ({
      needsSpeedModel: false,
      backfill: false,
      allocator: fixedShapeAllocator({ ...o, order: 'fifo' }),
      placer: progressiveSpreadPlacer({ ...o, growth: 'queue', headOfLine: true }),
    }),
  ),
  srtf: baseline(
    'srtf',
    'SRTF: shortest remaining time first, fixed shape per job (1+1), spreading',
    (o) => ({
      needsSpeedModel: false,
      allocator: fixedShapeAllocator({ ...o, order: 'srtf' }),
      placer: spreadPlacer(o),
    }),
  ),
  'srtf-fill': baseline(
    'srtf-fill',
    'SRTF, filling the shortest job 1:1 to its maximum before the next (DL2 simulator), spreading',
    (o) => ({
      needsSpeedModel: false,
      allocator: fixedShapeAllocator({ ...o, order: 'srtf' }),
      placer: progressiveSpreadPlacer({ ...o, growth: 'queue' }),
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
