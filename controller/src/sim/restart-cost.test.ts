import { describe, expect, it } from 'vitest';
import { DEFAULT_RESTART_COST_JSON, loadMeasuredPause } from './load';
import { isMeasuredPause, measuredPause, type RestartCost } from './restart-cost';

const doc: RestartCost = {
  generatedBy: 'npm run bench:restart',
  machine: { cpus: 2 },
  resizes: [
    { kind: 'allreduce', total: 2 },
    { kind: 'allreduce', total: 4 },
    { kind: 'ps-sync', total: 5 },
    { kind: 'ps-sync', total: 7 },
    { kind: 'ps-async', total: 6 },
    { kind: 'ps-async', total: 100 },
  ],
};

describe('the measured restart pause', () => {
  it.each([
    ['measured', 6.5], // every PS resize, sync and async: median of 5, 6, 7, 100
    ['measured:ps-sync', 6],
    ['measured:ps-async', 53],
    ['measured:allreduce', 3],
  ])('%s → %s s', (spec, seconds) => {
    expect(isMeasuredPause(spec)).toBe(true);
    expect(measuredPause(doc, spec)).toBe(seconds);
  });

  it('refuses a kind that was not measured, naming those that were', () => {
    expect(() => measuredPause(doc, 'measured:tf2')).toThrow(
      'no tf2 resize measured; measured: allreduce, ps-sync, ps-async',
    );
  });

  it.each(['30', 'measured:', 'measure', ''])('%j is not a measured pause', (spec) => {
    expect(isMeasuredPause(spec)).toBe(false);
  });

  it('reads the file the benchmark wrote (test/data/restart-cost.json), and says which file is bad', () => {
    for (const spec of ['measured', 'measured:allreduce', 'measured:ps-sync', 'measured:ps-async'])
      expect(loadMeasuredPause(spec)).toBeGreaterThan(0);
    expect(() => loadMeasuredPause('measured', `${DEFAULT_RESTART_COST_JSON}.missing`)).toThrow(
      'cannot read',
    );
  });
});
