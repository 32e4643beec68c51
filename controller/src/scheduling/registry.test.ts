import { describe, expect, it } from 'vitest';
import { getPolicy, POLICIES, policyNames } from './registry';

describe('policy registry', () => {
  it('lists the policies and ablations by name', () => {
    expect(policyNames()).toEqual([
      'drf',
      'fifo',
      'optimus',
      'optimus-allocation-only',
      'optimus-placement-only',
      'srtf',
      'tetris',
    ]);
  });

  it.each(policyNames())('%s builds a policy that carries its registered name', (name) => {
    const p = getPolicy(name);
    expect(p.name).toBe(name);
    expect(p.description.length).toBeGreaterThan(0);
    expect(POLICIES[name]?.description.length).toBeGreaterThan(0);
  });

  it('an unknown name fails with the list of known names', () => {
    expect(() => getPolicy('gandiva')).toThrow(
      'unknown policy "gandiva"; known policies: drf, fifo, optimus, optimus-allocation-only, optimus-placement-only, srtf, tetris',
    );
    expect(() => getPolicy('toString')).toThrow(/unknown policy/);
  });
});
