import { describe, expect, it } from 'vitest';
import { formatPolicyOptions, parsePolicyOptions } from '../scheduling/policy-options';
import { getPolicy } from '../scheduling/registry';
import { ABLATION_VARIANTS, ablationReport, OUR_RULES } from './ablation';
import type { VariantResult } from './evaluate';
import type { RunFigures } from './metrics';

const figures = (avgJct: number): RunFigures => ({
  avgJct,
  p95Jct: 0,
  makespan: 100,
  restarts: 0,
  utilization: 0,
  gpuUtilization: 0,
  maxStartWait: 0,
  lateStarts: 0,
});
const result = (perSeed: number[]): VariantResult => ({
  figures: figures(perSeed.reduce((a, b) => a + b, 0) / perSeed.length),
  perSeed: perSeed.map(figures),
  first: {} as VariantResult['first'],
});

describe('ablation', () => {
  it('has one uniquely named variant per rule, each a registered policy with CLI-reachable options', () => {
    const names = ABLATION_VARIANTS.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const rule of OUR_RULES) expect(names).toContain(`optimus -${rule.rule.replaceAll(' ', '-')}`);
    for (const v of ABLATION_VARIANTS) {
      expect(getPolicy(v.policy, v.options).name).toBe(v.policy);
      if (v.options) expect(parsePolicyOptions(formatPolicyOptions(v.options))).toEqual(v.options);
    }
  });

  it('reports each variant against optimus, DRF and the oracle, and on how many seeds it beat optimus', () => {
    const results = new Map([
      ['optimus', result([100, 200])],
      ['optimus -x', result([90, 250])],
      ['drf', result([300, 300])],
      ['optimus-oracle', result([80, 120])],
    ]);
    const doc = ablationReport(
      {
        workload: 'w',
        seeds: 2,
        bound: { makespanBound: 50, lastArrival: 40, jctBound: 60 },
        variants: [{ name: 'optimus -x', policy: 'optimus', estimation: { kind: 'online' }, note: 'x off' }],
        failed: new Map([['optimus-paper strict', 'seed 1: stalled']]),
      },
      results,
    );
    expect(doc.variants['optimus -x']).toMatchObject({
      jctVsOptimus: round3(170 / 150),
      jctVsDrf: round3(300 / 170),
      jctVsOracle: round3(170 / 100),
      seedsBetterThanOptimus: 1,
      jctVsOptimusRange: { min: 0.9, max: 1.25 },
      note: 'x off',
    });
    expect(doc.failed).toEqual({ 'optimus-paper strict': 'seed 1: stalled' });
    expect(doc.makespanBound).toBe(50);
    expect(doc.jctBound).toBe(60);
  });
});

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
