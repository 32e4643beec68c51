import { describe, expect, it } from 'vitest';
import type { TaskId } from '../../../shared/src/topics';
import type { ModelSource } from './core';
import { newJobRecord } from './job-record';
import { JobObservations, type ShapeSpan } from './observations';
import { refitJob } from './refit';
import { fakeCore, speedRecord, testJobSpec } from './testing';

const spec = testJobSpec('a');
const spans: ShapeSpan[] = [{ shape: { ps: 1, workers: 1 }, since: 0, until: null, fitted: false }];
const worker0: TaskId = { namespace: 'default', job: 'a', role: 'worker', index: 0 };

/** 20 records of worker 0 (steps 0–190): enough points for the fake core's fits. */
function observations(): JobObservations {
  const obs = new JobObservations(spec);
  for (let i = 0; i < 20; i++) obs.add(worker0, speedRecord('a', 0, i + 1, i * 10).record, spans);
  return obs;
}

const knownWork = { steps: 5000, lower: 4000, upper: 6000 };
const knownSpeed = { predict: () => ({ stepsPerSec: 7, lower: 7, upper: 7 }) };

describe('refitJob with a model source', () => {
  // What the source knows → where remaining work and speed come from.
  const rows: {
    name: string;
    knows: ReturnType<ModelSource['of']>;
    work: 'known' | 'fitted';
    speed: 'known' | 'fitted';
  }[] = [
    { name: 'nothing (online)', knows: null, work: 'fitted', speed: 'fitted' },
    {
      name: 'both (the oracle)',
      knows: { remaining: knownWork, speed: knownSpeed },
      work: 'known',
      speed: 'known',
    },
    { name: 'remaining work only', knows: { remaining: knownWork }, work: 'known', speed: 'fitted' },
    { name: 'speed only', knows: { speed: knownSpeed }, work: 'fitted', speed: 'known' },
  ];
  for (const row of rows)
    it(`knowing ${row.name}: work ${row.work}, speed ${row.speed}`, () => {
      const core = { ...fakeCore(), models: { of: () => row.knows } };
      const m = refitJob(core, newJobRecord(spec, 0), observations());
      // The fake core's convergence says 900 steps to go; its speed model scales with workers.
      expect(m.remaining.steps).toBe(row.work === 'known' ? 5000 : 900);
      expect(m.convergence.status).toBe('ok');
      if (m.convergence.status === 'ok')
        expect(m.convergence.remainingSteps).toBe(row.work === 'known' ? 5000 : 900);
      const v = m.speed.predict(1, 3).stepsPerSec;
      if (row.speed === 'known') expect(v).toBe(7);
      else expect(v).not.toBe(7);
      expect(m.speedFitted).toBe(row.speed === 'known' || m.speedSamples >= 3);
    });
});

describe('refitJob with peers’ speeds', () => {
  it('adds their shapes to the fit, but a shape the job ran is its own measurement', () => {
    const fitted: { ps: number; workers: number; stepsPerSec: number }[][] = [];
    const core = {
      ...fakeCore(),
      fitSpeed: (samples: readonly { ps: number; workers: number; stepsPerSec: number }[]) => {
        fitted.push([...samples]);
        return knownSpeed;
      },
    };
    const peers = [
      { ps: 1, workers: 1, stepsPerSec: 999, weight: 50 },
      { ps: 2, workers: 2, stepsPerSec: 3, weight: 50 },
      { ps: 1, workers: 3, stepsPerSec: 4, weight: 50 },
    ];
    const rec = { ...newJobRecord(spec, 0), spans };
    const m = refitJob(core, rec, observations(), null, peers);
    const used = fitted.at(-1) ?? [];
    expect(used.map((x) => `${x.ps}x${x.workers}`).sort()).toEqual(['1x1', '1x3', '2x2']);
    expect(used.find((x) => x.ps === 1 && x.workers === 1)?.stepsPerSec).not.toBe(999);
    expect(m.speedFitted).toBe(true);
  });
});
