import { describe, expect, it } from 'vitest';
import { formatPolicyOptions, parsePolicyOptions } from './policy-options';
import { getPolicy } from './registry';

describe('parsePolicyOptions', () => {
  it.each([
    { pairs: ['shrink=false'], expected: { shrink: false } },
    { pairs: ['gain=seconds', 'lookAhead=false'], expected: { gain: 'seconds', lookAhead: false } },
    { pairs: ['evenSearch=all', 'slack=0'], expected: { evenSearch: 'all', slack: 0 } },
    { pairs: ['fixedShape=2+3'], expected: { fixedShape: { ps: 2, workers: 3 } } },
    { pairs: ['stragglers=false'], expected: { stragglers: false } },
    { pairs: ['protect=true', 'protect=false'], expected: { protect: false } },
    {
      pairs: ['queueThresholds=3600,7200', 'promoteKnob=0'],
      expected: { queueThresholds: [3600, 7200], promoteKnob: 0 },
    },
  ])('$pairs', ({ pairs, expected }) => {
    expect(parsePolicyOptions(pairs)).toEqual(expected);
    expect(parsePolicyOptions(formatPolicyOptions(parsePolicyOptions(pairs)))).toEqual(expected);
  });

  it.each([
    { pairs: ['shrink'], error: 'must be key=value' },
    { pairs: ['magic=1'], error: 'unknown policy option "magic"' },
    { pairs: ['shrink=no'], error: 'policy option shrink: invalid value "no"' },
    { pairs: ['gain=minutes'], error: 'policy option gain' },
    { pairs: ['slack=-1'], error: 'policy option slack' },
    { pairs: ['fixedShape=2x3'], error: 'fixedShape must be P+W' },
    { pairs: ['queueThresholds=3600;7200'], error: 'policy option queueThresholds' },
    { pairs: ['promoteKnob=-1'], error: 'policy option promoteKnob' },
  ])('refuses $pairs', ({ pairs, error }) => {
    expect(() => parsePolicyOptions(pairs)).toThrow(error);
  });

  it('every key builds every policy without error', () => {
    const options = parsePolicyOptions(['shrink=false', 'gain=seconds', 'untilNoSpeedUp=false']);
    for (const name of ['optimus', 'optimus-paper', 'tetris', 'drf', 'fifo-fill', 'tiresias'])
      expect(getPolicy(name, options).name).toBe(name);
  });
});
