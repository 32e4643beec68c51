import { describe, expect, it } from 'vitest';
import { oneServerTrace as trace, parametricJob } from './bound-testing';
import { loadMeasured } from './load';
import { makespanBound, shortestRun } from './makespan-bound';
import { buildWorkload } from './workloads';

describe('makespan bound', () => {
  it.each([
    { name: 'the cluster holds the largest shape: 4 workers, 100 s', cpus: 8, run: 100 },
    { name: 'the cluster caps it at 1 PS + 3 workers: 133 s', cpus: 4, run: 400 / 3 },
    { name: 'only 1 + 1 fits: 400 s', cpus: 2, run: 400 },
  ])('$name', ({ cpus, run }) => {
    const total = new Map([['cpu', cpus]]);
    expect(shortestRun(parametricJob(), new Map(), total)).toBeCloseTo(run, 6);
  });

  it('is set by the job whose arrival + shortest run is latest, not by the last arrival', () => {
    const t = trace(
      [
        parametricJob({ id: 'early-long', arrival: 0, work: { kind: 'steps', steps: 10_000 } }),
        parametricJob({ id: 'late-short', arrival: 1000 }),
      ],
      8,
    );
    expect(makespanBound(t, new Map())).toEqual({ bound: 2500, jobId: 'early-long', lastArrival: 1000 });
  });

  it('on the paper workload: after the last arrival, named by the job that sets it', () => {
    const measured = loadMeasured();
    const t = buildWorkload('paper', { seed: 1, measured });
    const b = makespanBound(t, measured);
    expect(b.bound).toBeGreaterThan(b.lastArrival);
    expect(b.lastArrival).toBe(Math.max(...t.jobs.map((j) => j.arrival)));
  });
});
