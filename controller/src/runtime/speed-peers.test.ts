import { describe, expect, it } from 'vitest';
import type { SpeedSample } from '../models/speed/types';
import type { JobEntry } from './job-entry';
import type { JobSpec } from './job-spec';
import { SpeedPeers, speedClassOf } from './speed-peers';
import { testJobSpec } from './testing';

/** A job entry with given speed samples (only what SpeedPeers reads). */
function entry(name: string, over: Partial<JobSpec>, samples: SpeedSample[], version = 1): JobEntry {
  return {
    rec: { spec: { ...testJobSpec(name), ...over }, spans: [] },
    obs: { version, speedSamples: () => samples },
  } as unknown as JobEntry;
}

const s = (ps: number, workers: number, stepsPerSec: number, weight = 10): SpeedSample => ({
  ps,
  workers,
  stepsPerSec,
  weight,
});

describe('speedClassOf', () => {
  const base = { mode: 'sync' as const, batchSize: 64 };
  it.each([
    [{ ...base }, null],
    [{ ...base, model: 'resnet-50' }, 'resnet-50|sync|64'],
    [{ ...base, model: 'resnet-50', batchSize: 128 }, 'resnet-50|sync|128'],
    [{ ...base, model: 'resnet-50', mode: 'async' as const }, 'resnet-50|async|64'],
  ])('%j → %s', (spec, key) => expect(speedClassOf(spec)).toBe(key));
});

describe('SpeedPeers', () => {
  const a = entry('a', { model: 'm' }, [s(1, 1, 2), s(1, 2, 4)], 5);
  const b = entry('b', { model: 'm' }, [s(1, 1, 4, 30), s(2, 2, 6)], 7);
  const c = entry('c', { model: 'm', batchSize: 128 }, [s(3, 3, 9)]);
  const d = entry('d', {}, [s(4, 4, 1)]);
  const peers = new SpeedPeers([a, b, c, d]);

  it('gives a job its class’s speeds without its own, pooled per shape by weight', () => {
    const byShape = (e: JobEntry) =>
      Object.fromEntries(peers.samples(e).map((x) => [`${x.ps}x${x.workers}`, [x.stepsPerSec, x.weight]]));
    expect(byShape(a)).toEqual({ '1x1': [4, 30], '2x2': [6, 10] });
    expect(byShape(b)).toEqual({ '1x1': [2, 10], '1x2': [4, 10] });
    expect(peers.shapes(a)).toBe(2);
  });

  it('shares nothing across batch sizes or with jobs that declare no model', () => {
    expect(peers.samples(c)).toEqual([]);
    expect(peers.samples(d)).toEqual([]);
    expect(peers.version(d)).toBe(0);
  });

  it('moves a job’s version with its peers’ observations only', () => {
    expect(peers.version(a)).toBe(7);
    expect(new SpeedPeers([a, entry('b', { model: 'm' }, [], 8)]).version(a)).toBe(8);
    expect(new SpeedPeers([entry('a', { model: 'm' }, [], 99), b]).version(b)).toBe(99);
  });
});
