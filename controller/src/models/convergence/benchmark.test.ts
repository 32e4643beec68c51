import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

  it('sets ours beside the paper’s procedure per curve family, abstentions scored by the fallback', () => {
    expect(Object.keys(result.families).sort()).toEqual([
      'exponential',
      'inverse',
      'lr-drop',
      'plateau',
      'power-law',
    ]);
    for (const levels of Object.values(result.families)) {
      for (const f of Object.values(levels)) {
        expect(f.fits).toBeGreaterThan(0);
        expect(f.ours.abstentions).toBeGreaterThanOrEqual(0);
        expect(f.ours.medianError).not.toBeNull();
        expect(f.paper.medianError).not.toBeNull();
        expect(f.paired.oursCloser + f.paired.ties + f.paired.paperCloser).toBe(f.fits);
      }
    }
  });

  it('an abstention is scored with the fallback, not left out', () => {
    const noFit = runConvergenceBenchmark(STANDARD_SCENARIOS.slice(0, 1), {
      seed: 1,
      replicates: 3,
      estimate: { minPoints: 1e9 }, // ours always abstains
    });
    const at50 = noFit.families.inverse?.['0.5'];
    expect(at50?.ours.abstentions).toBe(1);
    // The fallback (20 epochs) against a truth of a few tens of epochs: a real, non-zero error.
    expect(at50?.ours.medianError).toBeGreaterThan(0);
    expect(noFit.paperForm['0.5']?.medianError).toBeNull();
    // Fit by fit too: a fallback is what is compared, so abstaining every time loses on the paired count.
    expect(at50?.paired.paperCloser).toBeGreaterThan(at50?.paired.oursCloser ?? Infinity);
  });

  it('is deterministic for a seed', () => {
    const again = runConvergenceBenchmark(STANDARD_SCENARIOS.slice(0, 2), { seed: 1, replicates: 3 });
    const once = runConvergenceBenchmark(STANDARD_SCENARIOS.slice(0, 2), { seed: 1, replicates: 3 });
    expect(again).toEqual(once);
  });
});

describe('the README’s fit-by-fit table', () => {
  it('is what `eval convergence` (seed 1, 30 replicates) measures', () => {
    const readme = readFileSync(join(__dirname, '../../../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Convergence, fit by fit'));
    const full = runConvergenceBenchmark(STANDARD_SCENARIOS, { seed: 1, replicates: 30 });
    const names: Record<string, string> = {
      inverse: '1/k',
      'lr-drop': 'lr-drop',
      'power-law': 'power-law',
      exponential: 'exponential',
      plateau: 'plateau',
    };
    for (const [family, levels] of Object.entries(full.families)) {
      const row = section.split('\n').find((l) => l.startsWith(`| ${names[family] ?? family} `));
      expect(row, family).toBeDefined();
      const cells = (row ?? '').split('|').slice(2, 5);
      ['0.25', '0.5', '0.75'].forEach((p, i) => {
        const f = levels[p]?.paired;
        expect(cells[i], `${family} at ${p}`).toContain(`${f?.oursCloser}/${f?.ties}/${f?.paperCloser} `);
        const verdict = f?.verdict === 'no difference' ? 'tie' : (f?.verdict ?? '?');
        expect(cells[i], `${family} at ${p}`).toContain(verdict);
      });
    }
  });
});
