import { describe, expect, it } from 'vitest';
import { DEFAULT_RESIDUAL_KERNEL } from './residual-kernel';
import { leaveModelsOut, settingName } from './leave-models-out';
import { evaluateSpeedModels } from './speed-eval';
import { syntheticSpeedData } from './synthetic';

describe('leave-models-out', () => {
  const data = syntheticSpeedData({ noise: 0.04, seed: 3, maxPs: 6, maxWorkers: 6 });
  const opts = { samples: 6, seeds: 2, choose: false };

  it('with a one-setting grid it scores every model exactly as the default protocol', () => {
    const r = leaveModelsOut(data, { ...opts, grid: [DEFAULT_RESIDUAL_KERNEL] });
    const plain = evaluateSpeedModels(data, opts);
    expect(r.medianError).toBe(plain.medianError);
    expect(r.baseline).toEqual(plain.baseline);
    for (const [model, m] of Object.entries(r.models)) {
      expect(m.medianError).toBe(plain.models[model]?.medianError);
      expect(m.chosen).toBe(settingName(DEFAULT_RESIDUAL_KERNEL));
    }
  });

  it('each held-out model is scored with a setting the other models chose', () => {
    const grid = [DEFAULT_RESIDUAL_KERNEL, false] as const;
    const r = leaveModelsOut(data, { ...opts, grid });
    expect(r.grid).toEqual(grid.map(settingName));
    for (const m of Object.values(r.models)) expect(r.grid).toContain(m.chosen);
    expect(Object.keys(r.models)).toHaveLength(data.jobs.length);
  });
});
