import { describe, expect, it } from 'vitest';
import { getPolicy } from '../scheduling/registry';
import { runEvaluation, type EvaluationOptions } from './evaluate';
import { loadMeasured } from './load';
import { productionModels } from './models';
import { workersAvailable } from './run-pool';
import { buildWorkload } from './workloads';

describe('simulation runs on worker threads', () => {
  it('give exactly the figures of the same runs in this thread', async () => {
    expect(workersAvailable()).toBe(true);
    const measured = loadMeasured();
    const base: EvaluationOptions = {
      workload: 'paper',
      source: (seed) => buildWorkload('paper', { seed, measured, jobs: 12 }),
      seeds: 2,
      measured,
      models: productionModels,
      getPolicy: (name, o) => getPolicy(name, o),
    };
    const variants = ['optimus', 'drf'].map((p) => ({
      name: p,
      policy: p,
      estimation: { kind: 'online' as const },
    }));
    const inThread = await runEvaluation({ ...base, workers: 1 }, variants);
    const parallel = await runEvaluation({ ...base, workers: 2 }, variants);
    for (const v of variants)
      expect(parallel.results.get(v.name)?.perSeed).toEqual(inThread.results.get(v.name)?.perSeed);
  }, 120_000);
});
