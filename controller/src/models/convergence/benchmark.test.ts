import { describe, expect, it } from 'vitest';
import { runConvergenceBenchmark } from './benchmark';
import { STANDARD_SCENARIOS } from './scenarios';

describe('runConvergenceBenchmark', () => {
  // 10 replicates keep the test fast; `eval convergence` runs 30 by default.
  const result = runConvergenceBenchmark(STANDARD_SCENARIOS, { seed: 1, replicates: 10 });

  it('meets the issue’s figures: median error ≤ 10% at 50% on paper-form curves, coverage ≥ 80%', () => {
    expect(result.paperForm['0.5']?.medianError).toBeLessThanOrEqual(0.1);
    expect(result.coverage).toBeGreaterThanOrEqual(0.8);
  });

  it('reports every scenario at every progress level', () => {
    expect(Object.keys(result.scenarios)).toEqual(STANDARD_SCENARIOS.map((s) => s.name));
    for (const s of Object.values(result.scenarios))
      expect(Object.keys(s.byProgress)).toEqual(['0.25', '0.5', '0.75']);
  });

  it('is deterministic for a seed', () => {
    const again = runConvergenceBenchmark(STANDARD_SCENARIOS.slice(0, 2), { seed: 1, replicates: 3 });
    const once = runConvergenceBenchmark(STANDARD_SCENARIOS.slice(0, 2), { seed: 1, replicates: 3 });
    expect(again).toEqual(once);
  });
});
