/** Same seed → same result; trace export → import → same simulation. */
import { describe, expect, it } from 'vitest';
import { getPolicy } from '../scheduling/registry';
import { simulate } from './engine';
import { loadMeasured } from './load';
import { productionModels } from './models';
import { parseTrace, serializeTrace, type Trace } from './trace';
import { buildWorkload, WORKLOAD_NAMES } from './workloads';

const measured = loadMeasured();

const run = async (trace: Trace, seed: number, policy = 'optimus') =>
  simulate({
    trace,
    measured,
    policy: getPolicy(policy),
    estimation: { kind: 'online' },
    models: productionModels,
    seed,
  });

describe('determinism', () => {
  it('the same seed gives the same workload and the same result', async () => {
    const a = buildWorkload('paper', { seed: 7, measured, jobs: 15 });
    const b = buildWorkload('paper', { seed: 7, measured, jobs: 15 });
    expect(b).toEqual(a);
    const ra = await run(a, 7);
    const rb = await run(b, 7);
    expect(rb.jobs).toEqual(ra.jobs);
    expect(rb.avgJct).toBe(ra.avgJct);
  });

  it('another seed gives another workload', () => {
    const a = buildWorkload('paper', { seed: 1, measured, jobs: 15 });
    const b = buildWorkload('paper', { seed: 2, measured, jobs: 15 });
    expect(b.jobs.map((j) => j.arrival)).not.toEqual(a.jobs.map((j) => j.arrival));
  });
});

describe('trace round-trip', () => {
  it.each(WORKLOAD_NAMES.filter((n) => n !== 'large'))('%s survives export → import unchanged', (name) => {
    const t = buildWorkload(name, { seed: 3, measured, jobs: 12 });
    expect(parseTrace(JSON.parse(serializeTrace(t)))).toEqual(t);
  });

  it('an imported trace simulates exactly like the original', async () => {
    const t = buildWorkload('bursty', { seed: 4, measured, jobs: 12 });
    const back = parseTrace(JSON.parse(serializeTrace(t)));
    const [a, b] = [await run(t, 4, 'drf'), await run(back, 4, 'drf')];
    expect(b.jobs).toEqual(a.jobs);
  });

  it.each([
    ['a missing cluster', (t: Record<string, unknown>) => delete t.cluster, 'cluster'],
    [
      'a negative arrival',
      (t: { jobs: { arrival: number }[] }) => (t.jobs[0]!.arrival = -1),
      'jobs.0.arrival',
    ],
    [
      'an unknown speed kind',
      (t: { jobs: { speed: unknown }[] }) => (t.jobs[0]!.speed = { kind: 'magic' }),
      'jobs.0.speed',
    ],
    [
      'a duplicate job id',
      (t: { jobs: { id: string }[] }) => (t.jobs[1]!.id = t.jobs[0]!.id),
      'duplicate job id',
    ],
  ] as const)('rejects %s with a message naming it', (_name, mutate, expected) => {
    const t = JSON.parse(serializeTrace(buildWorkload('paper', { seed: 1, measured, jobs: 3 })));
    (mutate as (x: unknown) => void)(t);
    expect(() => parseTrace(t)).toThrow(expected);
  });
});
