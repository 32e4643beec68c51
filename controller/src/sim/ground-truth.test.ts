/** Ground truth: measured speeds reproduced, curves' convergence, built-in workloads as specified. */
import { describe, expect, it } from 'vitest';
import { GiB } from '../../../shared/src/units';
import { parseMeasuredSpeeds } from '../models/speed';
import { readFileSync } from 'node:fs';
import { convergenceEpoch, curveForEpochs, lossAt, resolveWork } from './loss-curve';
import { DEFAULT_MEASURED_CSV, loadMeasured } from './load';
import { remoteFraction } from './locality';
import { resolveSpeed } from './speed-truth';
import { buildWorkload, WORKLOAD_NAMES } from './workloads';

const measured = loadMeasured();

describe('measured ground truth', () => {
  const data = parseMeasuredSpeeds(readFileSync(DEFAULT_MEASURED_CSV, 'utf8'));

  it('reproduces every measured sync shape exactly', () => {
    for (const job of data.jobs) {
      const truth = resolveSpeed(
        { speed: { kind: 'measured', model: job.model }, mode: 'sync', globalBatch: job.globalBatch },
        measured,
      );
      for (const s of job.shapes) expect(truth.speed(s.ps, s.workers)).toBeCloseTo(s.stepsPerSec, 9);
    }
  });

  it('interpolates an unmeasured shape between its measured neighbours', () => {
    // resnext-110 measures odd PS counts only: p = 2 lies between p = 1 and p = 3.
    const t = resolveSpeed(
      { speed: { kind: 'measured', model: 'resnext-110' }, mode: 'sync', globalBatch: 128 },
      measured,
    );
    const [a, b, mid] = [t.speed(1, 1), t.speed(3, 1), t.speed(2, 1)];
    expect(mid).toBeGreaterThan(Math.min(a, b) * 0.9);
    expect(mid).toBeLessThan(Math.max(a, b) * 1.1);
  });

  it('async at one worker equals sync; more async workers add throughput', () => {
    const input = { speed: { kind: 'measured', model: 'resnet-50' } as const, globalBatch: 32 };
    const sync = resolveSpeed({ ...input, mode: 'sync' }, measured);
    const async = resolveSpeed({ ...input, mode: 'async' }, measured);
    expect(async.speed(2, 1)).toBeCloseTo(sync.speed(2, 1), 9);
    expect(async.speed(4, 4)).toBeGreaterThan(async.speed(4, 1));
  });

  it('an unknown model is a clear error', () => {
    expect(() =>
      resolveSpeed({ speed: { kind: 'measured', model: 'nope' }, mode: 'sync', globalBatch: 1 }, measured),
    ).toThrow('nope');
  });
});

describe('loss curves and the convergence rule', () => {
  it.each([
    ['inverse', { kind: 'inverse', beta0: 0.3, beta1: 1, beta2: 0.1 }],
    ['lr-drop', { kind: 'lr-drop', beta0: 0.3, beta1: 1, beta2: 0.1, dropEpoch: 4, dropFraction: 0.4 }],
    ['plateau', { kind: 'plateau', beta0: 0.3, beta1: 1, beta2: 0.1, plateauEpochs: 2 }],
    ['exponential', { kind: 'exponential', a: 1, tau: 6, c: 0.1 }],
  ] as const)('%s: decreasing, and converges later with a smaller δ', (_n, curve) => {
    expect(lossAt(curve, 5)).toBeLessThan(lossAt(curve, 0));
    const at = (threshold: number) => convergenceEpoch({ curve, threshold, patience: 3, noise: 0 });
    expect(at(0.01)).toBeGreaterThan(at(0.05));
  });

  it('a fixed amount of work becomes a curve that converges there', () => {
    const truth = curveForEpochs(40);
    expect(Math.abs(convergenceEpoch(truth) - 40)).toBeLessThanOrEqual(1);
    expect(resolveWork({ kind: 'steps', steps: 4000 }, 100).totalSteps).toBe(4000);
  });
});

describe('built-in workloads', () => {
  it('paper: 13 servers, 60 jobs, the prototype demands, arrivals in [0, 12000] s', () => {
    const t = buildWorkload('paper', { seed: 1, measured });
    expect(t.cluster.servers).toHaveLength(13);
    expect(t.cluster.servers.filter((s) => s.capacity['nvidia.com/gpu'] === 2)).toHaveLength(6);
    expect(t.jobs).toHaveLength(60);
    for (const j of t.jobs) {
      expect(j.arrival).toBeGreaterThanOrEqual(0);
      expect(j.arrival).toBeLessThanOrEqual(12_000);
      expect(j.psDemand.cpu).toBeGreaterThanOrEqual(3);
      expect(j.psDemand.cpu).toBeLessThanOrEqual(4);
      expect(j.psDemand.memory! / GiB).toBeGreaterThanOrEqual(9);
      expect(j.workerDemand).toMatchObject({ cpu: 2, 'nvidia.com/gpu': 1 });
      expect(j.work.kind === 'loss-curve' && j.work.threshold).toBeGreaterThanOrEqual(0.01);
      expect(j.work.kind === 'loss-curve' && j.work.threshold).toBeLessThanOrEqual(0.05);
    }
    expect(new Set(t.jobs.map((j) => j.mode))).toEqual(new Set(['sync', 'async']));
  });

  it.each([
    ['all-sync', 'sync'],
    ['all-async', 'async'],
  ] as const)('%s has only %s jobs', (name, mode) => {
    expect(new Set(buildWorkload(name, { seed: 1, measured }).jobs.map((j) => j.mode))).toEqual(
      new Set([mode]),
    );
  });

  it('large: at least 2,000 jobs on at least 500 servers', () => {
    const t = buildWorkload('large', { seed: 1, measured });
    expect(t.jobs.length).toBeGreaterThanOrEqual(2000);
    expect(t.cluster.servers.length).toBeGreaterThanOrEqual(500);
  });

  it('every workload name builds', () => {
    for (const name of WORKLOAD_NAMES)
      expect(buildWorkload(name, { seed: 2, measured, jobs: 10 }).jobs).toHaveLength(10);
  });
});

describe('locality', () => {
  it.each([
    ['all on one server', ['a'], ['a', 'a'], 0],
    ['all apart', ['a'], ['b', 'c'], 1],
    ['half local', ['a', 'b'], ['a', 'c'], 0.75],
  ] as const)('%s', (_n, ps, workers, expected) => {
    const placement = [
      ...ps.map((server, index) => ({ role: 'ps' as const, index, server })),
      ...workers.map((server, index) => ({ role: 'worker' as const, index, server })),
    ];
    expect(remoteFraction(placement)).toBeCloseTo(expected, 9);
  });
});
