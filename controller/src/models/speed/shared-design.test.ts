import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../random';
import { fitCandidates, type FitRow } from './candidate-fit';
import { candidateFeatureSets, featureRow, stepTimeOf, type FeatureSet } from './features';
import { candidateRel, gatherDesign, sharedDesign } from './shared-design';
import { SYNTHETIC_LAWS } from './synthetic';

/** Rows of a synthetic law with 4% noise; `weighted` varies the row weights and drops one row. */
function rowsOf(
  n: number,
  seed: number,
  weighted: boolean,
): { rows: FitRow[]; batch: number; sync: boolean } {
  const law = SYNTHETIC_LAWS[seed % SYNTHETIC_LAWS.length]!;
  const random = seededRandom(seed);
  const rows = Array.from({ length: n }, (_, i) => {
    const ps = 1 + Math.floor(random() * 12);
    const workers = 1 + Math.floor(random() * 16);
    const speed = law.stepsPerSec(ps, workers) * Math.exp(0.04 * gaussian(random));
    const scale = !weighted ? 1 : i === 2 ? 0 : Math.sqrt(0.5 + random());
    return { ps, workers, stepTime: stepTimeOf(law.mode, speed, workers), scale };
  });
  return { rows, batch: law.globalBatch, sync: law.mode === 'sync' };
}

const cases = [
  { name: 'few rows (exact folds, ridge variant)', n: 8, ridges: [0, 0.1], weighted: false },
  { name: 'few weighted rows, one dropped', n: 12, ridges: [0, 0.1], weighted: true },
  { name: 'many rows (closed-form LOO)', n: 50, ridges: [0], weighted: false },
  { name: 'many weighted rows, one dropped', n: 40, ridges: [0], weighted: true },
];

describe('shared design over all candidate laws', () => {
  it.each(cases)('$name: every law fits exactly as with its own design', ({ n, ridges, weighted }) => {
    for (let seed = 1; seed <= 6; seed++) {
      const { rows, batch, sync } = rowsOf(n, seed, weighted);
      const sets: readonly FeatureSet[] = candidateFeatureSets(sync ? 'sync' : 'async');
      const shared = sharedDesign(sets, rows, batch);
      for (const set of sets) {
        const own = fitCandidates(set, rows, batch, ridges);
        const viaShared = fitCandidates(set, rows, batch, ridges, shared);
        viaShared.forEach((fit, v) => {
          const reference = own[v]!;
          expect(Array.from(fit.theta)).toEqual(Array.from(reference.theta));
          expect(Array.from(fit.cvResiduals)).toEqual(Array.from(reference.cvResiduals));
          expect(Array.from(fit.logFitted)).toEqual(Array.from(reference.logFitted));
          expect(Object.is(fit.cvError, reference.cvError)).toBe(true);
        });
      }
    }
  });

  it('gathers, for every law, the design and Gram matrix a straightforward per-law build gives', () => {
    const { rows, batch, sync } = rowsOf(30, 3, true);
    const sets = candidateFeatureSets(sync ? 'sync' : 'async');
    const shared = sharedDesign(sets, rows, batch);
    for (const set of sets) {
      const d = set.length;
      // The straightforward build: features / step time, columns scaled to unit RMS, Σ w·x·xᵀ.
      const raw = rows.map((r) => Array.from(featureRow(set, r.ps, r.workers, batch), (v) => v / r.stepTime));
      const scales = set.map((_, j) => Math.sqrt(raw.reduce((a, x) => a + x[j]! ** 2, 0) / rows.length) || 1);
      const rel = raw.map((x) => x.map((v, j) => v / scales[j]!));
      const design = gatherDesign(shared, set);
      expect(Array.from(candidateRel(design))).toEqual(rel.flat());
      expect(Array.from(design.scales)).toEqual(scales);
      for (let a = 0; a < d; a++)
        for (let b = 0; b < d; b++) {
          const gram = rows.reduce((acc, r, i) => acc + r.scale ** 2 * rel[i]![a]! * rel[i]![b]!, 0);
          expect(design.full.gram[a * d + b]).toBeCloseTo(gram, 12);
        }
    }
  });

  it('rejects a law with a feature outside the shared columns', () => {
    const { rows, batch } = rowsOf(10, 1, false);
    const shared = sharedDesign([['1', 'w']], rows, batch);
    expect(() => fitCandidates(['1', 'p'], rows, batch, [0], shared)).toThrow(/not in the shared design/);
  });
});
