import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../random';
import { fitCandidates, type FitRow } from './candidate-fit';
import { paperFeatureSet, stepTimeOf } from './features';
import { eq4Law } from './synthetic';

describe('approximate leave-one-out (the hat-matrix shortcut used above 20 rows)', () => {
  it('matches refitting without each row when no coefficient changes sign', () => {
    const law = eq4Law('all-active', [0.002, 0.2, 0.4, 0.02, 0.01], 64);
    const random = seededRandom(9);
    const rows: FitRow[] = Array.from({ length: 30 }, (_, i) => {
      const ps = 1 + (i % 6);
      const workers = 1 + ((i * 7) % 11);
      const speed = law.stepsPerSec(ps, workers) * Math.exp(0.01 * gaussian(random));
      return { ps, workers, stepTime: stepTimeOf('sync', speed, workers), scale: 1 };
    });
    const set = paperFeatureSet('sync');
    const [fit] = fitCandidates(set, rows, 64, [0]);
    rows.forEach((row, i) => {
      const without = rows.map((r, k) => (k === i ? { ...r, scale: 0 } : r));
      const [refit] = fitCandidates(set, without, 64, [0]);
      const exact = Math.log(row.stepTime) - refit!.logFitted[i]!;
      expect(fit!.cvResiduals[i]).toBeCloseTo(exact, 6);
    });
  });
});
