/**
 * `simulate --ablation`: where Optimus's gain comes from. Every variant runs on the same
 * workloads and seeds as Optimus:
 *
 * - each of this project's rules beyond the paper switched off alone (policy options, never a
 *   branch on a name);
 * - the paper's Optimus (`optimus-paper`), its allocator with our placement and ours with its
 *   placement;
 * - the paper's Fig. 15: allocation only, placement only, DRF, and estimation errors of 0 (oracle),
 *   10, 20, 30%.
 */
import type { PolicyOptions } from '../scheduling/registry';
import { formatPolicyOptions } from '../scheduling/policy-options';
import type { RunFigures } from './metrics';
import {
  perSeedRatioRange,
  round,
  roundFigures,
  type BoundSummary,
  type Variant,
  type VariantResult,
} from './evaluate';

const online = { kind: 'online' } as const;

/** Optimus with one rule off: the rule, the option that turns it off, where it lives. */
export const OUR_RULES: readonly {
  readonly rule: string;
  readonly off: PolicyOptions;
  readonly where: string;
}[] = [
  { rule: 'shrink-to-fit', off: { shrink: false }, where: 'placement/shrink-to-fit.ts' },
  { rule: 'stranding guard', off: { strandingGuard: false }, where: 'placement/stranding.ts' },
  { rule: 'uneven fallback', off: { unevenFallback: false }, where: 'placement/pack-by-role.ts' },
  { rule: 'keep shrunk', off: { keepShrunk: false }, where: 'core/sticky.ts' },
  { rule: 'backfill', off: { backfill: false }, where: 'compose.ts' },
  { rule: 'restart-aware time', off: { restartAwareTime: false }, where: 'allocation/grow.ts' },
  { rule: 'worth a restart', off: { worthARestart: false }, where: 'allocation/marginal-gain.ts' },
  { rule: 'shrink protection', off: { protect: false }, where: 'allocation/protect.ts' },
  { rule: 'relative gain', off: { gain: 'seconds' }, where: 'allocation/marginal-gain.ts' },
  { rule: 'look-ahead', off: { lookAhead: false }, where: 'allocation/grow.ts' },
  {
    rule: 'bounded even search',
    off: { evenSearch: 'all', slack: 0 },
    where: 'placement/fewest-servers.ts',
  },
];

export const ABLATION_VARIANTS: readonly Variant[] = [
  { name: 'optimus', policy: 'optimus', estimation: online, note: 'all our rules' },
  ...OUR_RULES.map((r): Variant => ({
    name: `optimus -${r.rule.replaceAll(' ', '-')}`,
    policy: 'optimus',
    options: r.off,
    estimation: online,
    note: `${r.rule} off (${formatPolicyOptions(r.off).join(' ')})`,
  })),
  {
    name: 'optimus -shared-speeds',
    policy: 'optimus',
    estimation: { kind: 'online', anonymous: true },
    note: 'jobs declare no model: no shared speeds, every job pre-runs (ADR 0021)',
  },
  { name: 'optimus-paper', policy: 'optimus-paper', estimation: online, note: "the paper's algorithm" },
  {
    name: 'optimus-paper strict',
    policy: 'optimus-paper',
    options: { unevenFallback: false },
    estimation: online,
    note: 'Theorem 1 even split only, no fallback when none fits',
  },
  {
    name: 'optimus-paper-allocator',
    policy: 'optimus-paper-allocator',
    estimation: online,
    note: "the paper's allocator, our placement",
  },
  {
    name: 'optimus-paper-placer',
    policy: 'optimus-paper-placer',
    estimation: online,
    note: "our allocator, the paper's placement",
  },
  { name: 'optimus-allocation-only', policy: 'optimus-allocation-only', estimation: online },
  { name: 'optimus-placement-only', policy: 'optimus-placement-only', estimation: online },
  { name: 'drf', policy: 'drf', estimation: online },
  { name: 'optimus-oracle', policy: 'optimus', estimation: { kind: 'oracle', error: 0 } },
  {
    name: 'optimus-oracle-work',
    policy: 'optimus',
    estimation: { kind: 'oracle', error: 0, knows: 'work' },
    note: 'true remaining work; speeds fitted online, pre-run paid',
  },
  {
    name: 'optimus-oracle-speed',
    policy: 'optimus',
    estimation: { kind: 'oracle', error: 0, knows: 'speed' },
    note: 'true speeds, no pre-run; remaining work estimated online',
  },
  { name: 'optimus-error-10', policy: 'optimus', estimation: { kind: 'oracle', error: 0.1 } },
  { name: 'optimus-error-20', policy: 'optimus', estimation: { kind: 'oracle', error: 0.2 } },
  { name: 'optimus-error-30', policy: 'optimus', estimation: { kind: 'oracle', error: 0.3 } },
];

export type AblationRow = RunFigures & {
  /** The variant's avg JCT ÷ Optimus's (> 1: the variant is worse). */
  readonly jctVsOptimus: number;
  /** DRF's avg JCT ÷ the variant's (paper Fig. 15: allocation alone 1.62, placement alone 1.17). */
  readonly jctVsDrf: number;
  readonly jctVsOracle: number;
  /** Seeds on which the variant's avg JCT is below Optimus's. */
  readonly seedsBetterThanOptimus: number;
  /** Smallest and largest per-seed `jctVsOptimus` (each seed's variant ÷ that seed's Optimus). */
  readonly jctVsOptimusRange?: { readonly min: number; readonly max: number };
  readonly note?: string;
};

/** The `simulate --ablation --json` document. */
export interface AblationReport {
  readonly workload: string;
  readonly seeds: number;
  readonly makespanBound: number;
  /** The average JCT no policy can beat (`jct-bound.ts`), mean over seeds. */
  readonly jctBound: number;
  readonly variants: Record<string, AblationRow>;
  /** Variants whose run failed on some seed, with the reason (e.g. the policy stalled). */
  readonly failed: Record<string, string>;
}

export function ablationReport(
  o: {
    workload: string;
    seeds: number;
    bound: BoundSummary;
    variants: readonly Variant[];
    failed?: ReadonlyMap<string, string>;
  },
  results: ReadonlyMap<string, VariantResult>,
): AblationReport {
  const base = results.get('optimus');
  const drf = results.get('drf')?.figures.avgJct ?? NaN;
  const oracle = results.get('optimus-oracle')?.figures.avgJct ?? NaN;
  const notes = new Map(o.variants.map((v) => [v.name, v.note]));
  const variants: Record<string, AblationRow> = {};
  for (const [name, r] of results) {
    const better = r.perSeed.filter((f, i) => f.avgJct < (base?.perSeed[i]?.avgJct ?? NaN)).length;
    const note = notes.get(name);
    const range = perSeedRatioRange(r.perSeed, base?.perSeed ?? []);
    variants[name] = {
      ...roundFigures(r.figures),
      jctVsOptimus: round(r.figures.avgJct / (base?.figures.avgJct ?? NaN)),
      jctVsDrf: round(drf / r.figures.avgJct),
      jctVsOracle: round(r.figures.avgJct / oracle),
      seedsBetterThanOptimus: better,
      ...(range === null ? {} : { jctVsOptimusRange: range }),
      ...(note === undefined ? {} : { note }),
    };
  }
  return {
    workload: o.workload,
    seeds: o.seeds,
    makespanBound: round(o.bound.makespanBound, 1),
    jctBound: round(o.bound.jctBound, 1),
    variants,
    failed: Object.fromEntries(o.failed ?? []),
  };
}
