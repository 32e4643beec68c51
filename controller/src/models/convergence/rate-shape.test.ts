import { describe, expect, it } from 'vitest';
import { estimateConvergence } from './estimate';
import { fitRateShape, rateShapeMean } from './rate-shape';
import { observe, powerCurve, seededRandom, trueTotalSteps } from './synthetic';

const SHAPES = [
  {
    kind: 'slow' as const,
    name: 'a/√(1 + r·x) + c',
    truth: { a: 0.9, r: 0.004, c: 0.1 },
    at: (t: { a: number; r: number; c: number }, k: number) => t.a / Math.sqrt(1 + t.r * k) + t.c,
  },
  {
    kind: 'fast' as const,
    name: 'a·e^(−r·x) + c',
    truth: { a: 0.8, r: 0.003, c: 0.2 },
    at: (t: { a: number; r: number; c: number }, k: number) => t.a * Math.exp(-t.r * k) + t.c,
  },
];

describe.each(SHAPES)('$kind shape $name', ({ kind, truth, at }) => {
  it('recovers its parameters from noiseless data', () => {
    const x = Array.from({ length: 40 }, (_, i) => i * 50);
    const y = x.map((k) => at(truth, k));
    const fit = fitRateShape({ x, y, w: x.map(() => 1) }, kind);
    expect(fit.a).toBeCloseTo(truth.a, 3);
    expect(fit.r / truth.r).toBeCloseTo(1, 2);
    expect(fit.c).toBeCloseTo(truth.c, 3);
  });

  it('has the exact interval mean', () => {
    const f = { kind, a: 0.9, r: 0.01, c: 0.1, sse: 0 };
    let sum = 0;
    for (let i = 0; i < 10_000; i++) sum += at(f, 100 + (i + 0.5) * 0.01);
    expect(rateShapeMean(f, 100, 200)).toBeCloseTo(sum / 10_000, 6);
  });
});

describe('the slow shape in the estimator', () => {
  it('widens the interval towards the later truth of a slowly decaying curve', () => {
    const rule = { stepsPerEpoch: 100, threshold: 0.005, patience: 3 };
    const curve = powerCurve({ a: 1, tau: 2, p: 0.5, floor: 0.1 }, 100);
    const truth = trueTotalSteps(curve, rule) ?? NaN;
    const scenario = {
      name: 'power',
      paperForm: false,
      curve,
      rule,
      pointsPerEpoch: 10,
      noise: { relative: 0.03, autocorrelation: 0.3, outlierRate: 0 },
    };
    let widerUpper = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const points = observe(scenario, truth / 2, seededRandom(seed));
      // The slow shape alone: with the paper's fit chosen, its prediction may already lie beyond.
      const wide = estimateConvergence(points, rule, { paperFitWhenBetter: false });
      const narrow = estimateConvergence(points, rule, { slowShape: false, paperFitWhenBetter: false });
      if (wide.status !== 'ok' || narrow.status !== 'ok') continue;
      expect(wide.predictedTotalSteps).toBe(narrow.predictedTotalSteps);
      if (wide.upper > narrow.upper) widerUpper++;
    }
    expect(widerUpper).toBeGreaterThanOrEqual(5);
  });
});
