import { describe, expect, it } from 'vitest';
import { evaluateSpeedModels } from './speed-eval';
import { SYNTHETIC_LAWS, syntheticSpeedData } from './synthetic';

describe('evaluateSpeedModels', () => {
  const data = syntheticSpeedData({ noise: 0.04, seed: 3, maxPs: 8, maxWorkers: 8 });

  it('reports per-model and pooled errors of the model and of the paper baseline', () => {
    const r = evaluateSpeedModels(data, { samples: 6, seeds: 2, choose: false });
    expect(Object.keys(r.models)).toEqual(SYNTHETIC_LAWS.map((l) => l.name));
    for (const m of Object.values(r.models)) {
      expect(m.predictions).toBe(2 * (64 - 6));
      expect(m.medianError).toBeLessThanOrEqual(m.p90Error);
    }
    expect(r.intervalCoverage).toBeGreaterThan(0.6);
    expect(r.skippedModels).toEqual([]);
  });

  it('is reproducible for the same seeds, and --choose ignores the random draw', () => {
    const opts = { samples: 5, seeds: 2, choose: false };
    expect(evaluateSpeedModels(data, opts)).toEqual(evaluateSpeedModels(data, opts));
    const chosen = evaluateSpeedModels(data, { ...opts, choose: true });
    expect(chosen.models['eq2-derived']!.predictions).toBe(2 * (64 - 5));
  });

  // The model must not be tuned to the measured file: on synthetic laws (paper forms with other
  // constants, laws outside every candidate family, async) it is no worse than the paper baseline.
  it.each([5, 10])('is no worse than the paper baseline on synthetic laws with %i samples', (samples) => {
    const r = evaluateSpeedModels(syntheticSpeedData({ noise: 0.04, seed: 11 }), {
      samples,
      seeds: 4,
      choose: false,
    });
    expect(r.medianError).toBeLessThanOrEqual(r.baseline.medianError * 1.02);
    expect(r.p90Error).toBeLessThanOrEqual(r.baseline.p90Error * 1.02);
  });

  it('chosen shapes beat random ones at 5 samples on synthetic laws', () => {
    const synthetic = syntheticSpeedData({ noise: 0.04, seed: 5 });
    const random = evaluateSpeedModels(synthetic, { samples: 5, seeds: 3, choose: false });
    const chosen = evaluateSpeedModels(synthetic, { samples: 5, seeds: 1, choose: true });
    expect(chosen.medianError).toBeLessThan(random.medianError);
    expect(chosen.p90Error).toBeLessThan(random.p90Error);
  });

  it('skips jobs with too few shapes and rejects bad options', () => {
    const small = { ...data.jobs[1]!, model: 'small', shapes: data.jobs[1]!.shapes.slice(0, 4) };
    const r = evaluateSpeedModels(
      { jobs: [data.jobs[0]!, small], excludedRows: 0 },
      { samples: 5, seeds: 1, choose: false },
    );
    expect(r.skippedModels).toEqual(['small']);
    expect(Object.keys(r.models)).toEqual([data.jobs[0]!.model]);
    expect(() => evaluateSpeedModels(data, { samples: 64, seeds: 1, choose: false })).toThrow(
      /nothing to predict/,
    );
    expect(() => evaluateSpeedModels(data, { samples: 0, seeds: 1, choose: false })).toThrow(/samples/);
  });
});
