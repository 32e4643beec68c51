import { describe, expect, it } from 'vitest';
import { evaluateAllReduceModels } from './allreduce-eval';
import { SYNTHETIC_ALLREDUCE_LAWS, syntheticAllReduceData } from './allreduce-synthetic';

describe('evaluateAllReduceModels', () => {
  const data = syntheticAllReduceData({ noise: 0.03, seed: 3 });
  const n = data.jobs[0]!.configurations.length;

  it('reports per-model and pooled errors of ours and of Pollux’s model on the same samples', () => {
    const r = evaluateAllReduceModels(data, { samples: 6, seeds: 2 });
    expect(Object.keys(r.models)).toEqual(SYNTHETIC_ALLREDUCE_LAWS.map((l) => l.name));
    for (const m of Object.values(r.models)) {
      expect(m.predictions).toBe(2 * (n - 6));
      expect(m.configurations).toBe(n);
      expect(m.medianError).toBeLessThanOrEqual(m.p90Error);
      expect(m.baseline.medianError).toBeLessThanOrEqual(m.baseline.p90Error);
      expect(m.oursCloser).toBeGreaterThan(0);
      expect(m.beyond).toBeNull();
    }
    expect(r).toMatchObject({ kind: 'allreduce', samples: 6, seeds: 2, baselineName: 'pollux-throughput' });
    expect(r.predictions).toBe(4 * 2 * (n - 6));
    expect(r.intervalCoverage).toBeGreaterThan(0.6);
  });

  it('is reproducible for the same seeds and differs for others', () => {
    const opts = { samples: 5, seeds: 2 };
    expect(evaluateAllReduceModels(data, opts)).toEqual(evaluateAllReduceModels(data, opts));
    expect(evaluateAllReduceModels(data, { ...opts, firstSeed: 3 }).medianError).not.toBe(
      evaluateAllReduceModels(data, opts).medianError,
    );
  });

  it('tells a wrong model from a right one (a constant speed scores far worse)', () => {
    const constant = evaluateAllReduceModels(data, {
      samples: 8,
      seeds: 2,
      fit: (samples) => {
        const mean = samples.reduce((a, s) => a + s.stepsPerSec, 0) / samples.length;
        return { predict: () => ({ stepsPerSec: mean, lower: mean, upper: mean }) };
      },
    });
    const ours = evaluateAllReduceModels(data, { samples: 8, seeds: 2 });
    expect(constant.medianError).toBeGreaterThan(4 * ours.medianError);
    expect(constant.baseline).toEqual(ours.baseline);
  });

  // Not tuned to Pollux's measurements: on laws of Pollux's own form (where its model is the truth)
  // and on one in neither family, ours stays within 10% of its median error.
  it.each([5, 10])('stays close to Pollux’s model on synthetic laws with %i samples', (samples) => {
    const r = evaluateAllReduceModels(syntheticAllReduceData({ noise: 0.04, seed: 11 }), {
      samples,
      seeds: 4,
    });
    expect(r.medianError).toBeLessThanOrEqual(r.baseline.medianError * 1.1);
  });

  it('scores the beyond-range configurations with the same fits', () => {
    const job = data.jobs[0]!;
    const withBeyond = { jobs: [{ ...job, beyond: job.configurations.filter((c) => c.servers === 4) }] };
    const r = evaluateAllReduceModels(withBeyond, { samples: 5, seeds: 2 });
    expect(r.beyond?.predictions).toBe(2 * withBeyond.jobs[0]!.beyond.length);
    expect(r.models[job.model]?.beyond?.predictions).toBe(r.beyond?.predictions);
  });

  it('skips jobs with too few configurations and rejects bad options', () => {
    const small = {
      ...data.jobs[1]!,
      model: 'small',
      configurations: data.jobs[1]!.configurations.slice(0, 4),
    };
    const r = evaluateAllReduceModels({ jobs: [data.jobs[0]!, small] }, { samples: 5, seeds: 1 });
    expect(r.skippedModels).toEqual(['small']);
    expect(() => evaluateAllReduceModels({ jobs: [small] }, { samples: 5, seeds: 1 })).toThrow(
      /nothing to predict/,
    );
    expect(() => evaluateAllReduceModels(data, { samples: 0, seeds: 1 })).toThrow(/samples/);
    expect(() => evaluateAllReduceModels(data, { samples: 3, seeds: 0 })).toThrow(/seeds/);
  });
});
