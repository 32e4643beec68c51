import { describe, expect, it } from 'vitest';
import { getPolicy, POLICIES, policyNames } from './registry';

describe('policy registry', () => {
  it('lists the policies and ablations by name', () => {
    expect(policyNames()).toEqual([
      'drf',
      'drf-gang',
      'fifo',
      'fifo-fill',
      'optimus',
      'optimus-allocation-only',
      'optimus-paper',
      'optimus-paper-allocator',
      'optimus-paper-placer',
      'optimus-placement-only',
      'srtf',
      'srtf-fill',
      'tetris',
      'tetris-gang',
      'tiresias',
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
      `unknown policy "gandiva"; known policies: ${policyNames().join(', ')}`,
    );
    expect(() => getPolicy('toString')).toThrow(/unknown policy/);
  });
});
