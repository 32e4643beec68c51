import { describe, expect, it } from 'vitest';
import { loadMeasured } from './load';
import { linearRbf } from './measured-rbf';
import type { MeasuredRow } from './measured-table';

const row = (ps: number, workers: number, stepsPerSec: number): MeasuredRow => ({
  model: 'm',
  globalBatch: 32,
  ps,
  workers,
  stepsPerSec,
});

describe("DL2's speed function (linear RBF)", () => {
  it('passes through every measured shape and goes on beyond them', () => {
    const rows = [row(1, 1, 1), row(1, 2, 1.8), row(2, 2, 2.5), row(2, 4, 3.1), row(4, 4, 3.6)];
    const f = linearRbf(rows);
    for (const r of rows) expect(f(r.ps, r.workers)).toBeCloseTo(r.stepsPerSec, 9);
    expect(Number.isFinite(f(16, 16))).toBe(true);
  });

  it('refuses a repeated shape (singular)', () => {
    expect(() => linearRbf([row(1, 1, 1), row(1, 1, 2)])).toThrow('singular');
  });

  it('inside the measured range, measured shapes give the table’s speed; beyond it, it extrapolates', () => {
    const vgg = loadMeasured().get('vgg-16')!;
    expect(vgg.rbfSpeed(1, 1)).toBeCloseTo(vgg.syncSpeed(1, 1), 6);
    expect(vgg.extrapolatedSpeed(4, 4)).toBe(vgg.syncSpeed(4, 4));
    // vgg-16's workers were measured up to 12; the table clamps 16 to 12, the RBF does not.
    expect(vgg.syncSpeed(16, 16)).toBe(vgg.syncSpeed(16, 12));
    expect(vgg.extrapolatedSpeed(16, 16)).not.toBe(vgg.syncSpeed(16, 12));
  });
});
