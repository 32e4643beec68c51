import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { oneServerTrace as trace, parametricJob as job } from './bound-testing';
import { getPolicy } from '../scheduling/registry';
import { simulate } from './engine';
import { jctBound, minimumAreas, srptMeanFlow } from './jct-bound';
import { loadMeasured } from './load';
import { shortestRun, totals } from './makespan-bound';
import { productionModels } from './models';
import { buildWorkload } from './workloads';

/** Mean flow time when jobs run one at a time in arrival order (a feasible one-machine schedule). */
function fifoMeanFlow(jobs: readonly { arrival: number; size: number }[], capacity: number): number {
  let t = -Infinity;
  let flow = 0;
  for (const j of [...jobs].sort((a, b) => a.arrival - b.arrival)) {
    t = Math.max(t, j.arrival) + j.size / capacity;
    flow += t - j.arrival;
  }
  return flow / jobs.length;
}

describe('one-machine SRPT', () => {
  it.each([
    { name: 'one job', jobs: [{ arrival: 3, size: 10 }], capacity: 2, mean: 5 },
    {
      name: 'two at once: the shorter first',
      jobs: [
        { arrival: 0, size: 3 },
        { arrival: 0, size: 1 },
      ],
      capacity: 1,
      mean: (1 + 4) / 2,
    },
    {
      name: 'a short arrival preempts a long job',
      jobs: [
        { arrival: 0, size: 10 },
        { arrival: 2, size: 1 },
      ],
      capacity: 1,
      mean: (1 + 11) / 2,
    },
    {
      name: 'a long arrival does not preempt',
      jobs: [
        { arrival: 0, size: 2 },
        { arrival: 1, size: 10 },
      ],
      capacity: 1,
      mean: (2 + 11) / 2,
    },
    {
      name: 'idle between arrivals',
      jobs: [
        { arrival: 0, size: 1 },
        { arrival: 5, size: 1 },
      ],
      capacity: 1,
      mean: 1,
    },
    { name: 'no jobs', jobs: [], capacity: 1, mean: 0 },
  ])('$name', ({ jobs, capacity, mean }) => {
    expect(srptMeanFlow(jobs, capacity)).toBeCloseTo(mean, 9);
  });

  it('is never worse than running the jobs in arrival order, nor better than the total work allows', () => {
    const jobs = fc.array(
      fc.record({
        arrival: fc.double({ min: 0, max: 100, noNaN: true }),
        size: fc.double({ min: 0.01, max: 50, noNaN: true }),
      }),
      { minLength: 1, maxLength: 30 },
    );
    fc.assert(
      fc.property(jobs, fc.double({ min: 0.5, max: 8, noNaN: true }), (js, capacity) => {
        const srpt = srptMeanFlow(js, capacity);
        expect(srpt).toBeLessThanOrEqual(fifoMeanFlow(js, capacity) + 1e-9);
        // Each job alone on the machine is a floor for its own flow time.
        expect(srpt).toBeGreaterThanOrEqual(js.reduce((s, j) => s + j.size / capacity, 0) / js.length - 1e-9);
      }),
    );
  });
});

describe('average-JCT bound', () => {
  it("a job's smallest area is its most resource-efficient shape: 1 PS + 4 workers for 100 s", () => {
    const total = new Map([['cpu', 8]]);
    expect(minimumAreas(job(), new Map(), total).get('cpu')).toBeCloseTo(500, 6);
    expect(minimumAreas(job(), new Map(), new Map([['cpu', 2]])).get('cpu')).toBeCloseTo(800, 6);
  });

  it.each([
    { name: 'one job: its shortest run', n: 1, bound: 100, shared: 500 / 8 },
    // Four jobs of area 500 on 8 CPUs finish at 62.5, 125, 187.5, 250 s at best.
    { name: 'four at once: the pooled CPUs', n: 4, bound: 156.25, shared: 156.25 },
  ])('$name', ({ n, bound, shared }) => {
    const jobs = Array.from({ length: n }, (_, i) => job({ id: `j${i}` }));
    const b = jctBound(trace(jobs, 8), new Map());
    expect(b.alone).toBeCloseTo(100, 6);
    expect(b.shared).toBeCloseTo(shared, 6);
    expect(b.bound).toBeCloseTo(bound, 6);
    expect(b.resource).toBe('cpu');
  });

  it('on the paper workload no policy beats it, and no job beats its shortest run', async () => {
    const measured = loadMeasured();
    const t = buildWorkload('paper', { seed: 1, measured });
    const total = totals(t);
    const b = jctBound(t, measured);
    expect(b.bound).toBeGreaterThan(0);
    for (const name of ['optimus', 'drf']) {
      const r = await simulate({
        trace: t,
        measured,
        policy: getPolicy(name),
        estimation: { kind: 'oracle', error: 0 },
        models: productionModels,
        seed: 1,
      });
      expect(r.avgJct).toBeGreaterThanOrEqual(b.bound);
      for (const outcome of r.jobs) {
        const tj = t.jobs.find((j) => j.id === outcome.id);
        if (!tj) throw new Error(`unknown job ${outcome.id}`);
        expect(outcome.jct).toBeGreaterThanOrEqual(shortestRun(tj, measured, total) * (1 - 1e-9));
      }
    }
  }, 60_000);
});
