import { describe, expect, it } from 'vitest';
import type { Beta } from './curve';
import { meanLoss } from './curve';
import { predictEpoch } from './predict-epoch';
import { convergedEpochOf } from './rule';

describe('convergedEpochOf (the issue’s rule on observed epoch losses)', () => {
  it.each([
    // ℓ = losses / max; decreases ℓ(j−1) − ℓ(j) for j = 1.. must stay < δ for K epochs ending at e.
    ['converges once K small decreases follow', [1, 0.5, 0.3, 0.29, 0.285, 0.284], 0.02, 2, 4],
    ['patience 1 stops at the first small decrease', [1, 0.5, 0.3, 0.29, 0.285], 0.02, 1, 3],
    ['a large decrease resets the run', [1, 0.99, 0.98, 0.5, 0.49, 0.48], 0.02, 3, null],
    ['e is at least K (j starts at 1)', [1, 0.999, 0.998, 0.997], 0.01, 3, 3],
    ['increases count as small decreases', [1, 0.5, 0.6, 0.7], 0.05, 2, 3],
    ['normalised by the largest epoch loss', [10, 5, 3, 2.9, 2.85], 0.02, 2, 4],
    ['not met within the list', [1, 0.8, 0.6, 0.4], 0.01, 2, null],
  ])('%s', (_name, losses, threshold, patience, expected) => {
    expect(convergedEpochOf(losses, threshold, patience)).toBe(expected);
  });
});

/** Brute force: the rule walked epoch by epoch over the fitted curve's epoch means. */
function bruteForce(beta: Beta, spe: number, threshold: number, patience: number): number | null {
  const losses = Array.from({ length: 5000 }, (_, e) => meanLoss(beta, e * spe, (e + 1) * spe));
  return convergedEpochOf(losses, threshold, patience);
}

describe('predictEpoch (the rule on a fitted curve, by search)', () => {
  it.each([
    ['Seq2Seq example, per-epoch coefficients', [0.21, 1.07, 0.07], 1, 0.01, 3],
    ['per-step coefficients', [0.0021, 1.07, 0.07], 100, 0.01, 3],
    ['slow curve, long patience', [0.0005, 1, 0.3], 100, 0.002, 5],
    ['fast curve', [0.01, 1, 0.15], 100, 0.005, 2],
    ['steep start (small β1)', [0.02, 0.2, 0.1], 50, 0.003, 4],
  ] as const)('%s matches a brute-force walk', (_name, beta, spe, threshold, patience) => {
    const rule = { stepsPerEpoch: spe, threshold, patience };
    const predicted = predictEpoch(beta, { rule, segmentStart: 0, observed: () => NaN, maxEpoch: 1e6 });
    expect(predicted).toBe(bruteForce(beta, spe, threshold, patience));
    expect(predicted).not.toBeNull();
  });

  it('returns null beyond the horizon', () => {
    const rule = { stepsPerEpoch: 100, threshold: 1e-6, patience: 3 };
    expect(
      predictEpoch([0.0021, 1.07, 0.07], { rule, segmentStart: 0, observed: () => NaN, maxEpoch: 50 }),
    ).toBeNull();
  });

  it('uses observed epochs before a segment and normalises by their maximum', () => {
    // Epochs 0–1 observed (normalised 1, 0.8); the fitted segment starts at epoch 2 from a level of ≈ 0.5.
    const rule = { stepsPerEpoch: 10, threshold: 0.01, patience: 2 };
    const beta: Beta = [0.02, 2.5, 0.1];
    const e = predictEpoch(beta, {
      rule,
      segmentStart: 20,
      observed: (i) => [1, 0.8][i] ?? NaN,
      maxEpoch: 1e5,
    });
    const losses = [1, 0.8, ...Array.from({ length: 3000 }, (_, i) => meanLoss(beta, i * 10, (i + 1) * 10))];
    expect(e).toBe(convergedEpochOf(losses, 0.01, 2));
  });
});
