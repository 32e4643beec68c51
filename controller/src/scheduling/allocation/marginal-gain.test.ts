import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU, RESOURCE_GPU as GPU } from '../../../../shared/src/units';
import { exact, job, server, snapshot, type SnapshotBuilder } from '../testing/builders';
import { getPolicy, type PolicyOptions } from '../registry';
import { decideBy, shapeOf } from '../testing/decide';

/** Speed grows with workers only; PS do not help (their gain is 0). */
const linearInWorkers = exact((_p, w) => w);
/** Speed peaks at 3 workers: f(3) = 1.5 > f(4) = 1.33. */
const peaksAtThree = exact((_p, w) => w - (w * w) / 6);
/** Both PS and workers help, with diminishing returns. */
const balanced = exact((p, w) => (p * w) / (p + w));

describe('Optimus allocation: greedy marginal gain (paper §4.1)', () => {
  const cases: {
    name: string;
    input: SnapshotBuilder;
    expected: Record<string, string>;
    options?: PolicyOptions;
  }[] = [
    {
      name: 'a lone job grows to its maxima while every task still gains',
      input: snapshot()
        .servers(server('s1').cpu(64))
        .jobs(job('a').speed(balanced).bounds({ maxPs: 2, maxWorkers: 3 })),
      expected: { a: '2+3' },
    },
    {
      name: 'growth stops where the gain turns non-positive, with resources to spare',
      input: snapshot().servers(server('s1').cpu(64)).jobs(job('a').speed(peaksAtThree)),
      expected: { a: '1+3' },
    },
    {
      // Updated for the relative gain (now the default): with the paper's gain in seconds the
      // longer job takes every extra task; this case now runs with `gain: 'seconds'`.
      name: "paper gain ('seconds'): the extra task goes to the job that saves the most time",
      options: { gain: 'seconds' },
      input: snapshot()
        .servers(server('s1').cpu(6))
        .jobs(
          job('a').speed(linearInWorkers).remaining(1000),
          job('b').speed(linearInWorkers).remaining(100),
        ),
      expected: { a: '1+3', b: '1+1' },
    },
    {
      name: 'gain is per unit of the dominant resource: GPU workers cost more than CPU workers',
      // Shares: CPU worker 1/7, GPU worker 1/4. With Q_g = 1.5 Q_c the per-share gains are
      // c: 3.5Q, 1.17Q, …; g: 3Q, 1Q, … → c, g, c. Raw time savings would give g, c, g instead.
      input: snapshot()
        .servers(server('g1').cpu(7).gpus(4))
        .jobs(
          job('c').speed(linearInWorkers).remaining(1000),
          job('g')
            .speed(linearInWorkers)
            .remaining(1500)
            .worker({ [CPU]: 1, [GPU]: 1 }),
        ),
      expected: { c: '1+3', g: '1+2' },
    },
    {
      name: 'a job whose next task does not fit is skipped, not the end of the loop',
      input: snapshot()
        .servers(server('g1').cpu(8).gpus(1))
        .jobs(
          job('g')
            .speed(linearInWorkers)
            .remaining(1e9)
            .worker({ [CPU]: 1, [GPU]: 1 }),
          job('c').speed(linearInWorkers).remaining(10),
        ),
      expected: { g: '1+1', c: '1+5' },
    },
    {
      name: 'minimum shapes are granted even without gain; maxima cap growth',
      input: snapshot()
        .servers(server('s1').cpu(64))
        .jobs(
          job('min')
            .speed(exact(() => 1))
            .bounds({ minPs: 2, minWorkers: 3 }),
          job('max').speed(linearInWorkers).bounds({ maxWorkers: 2 }),
        ),
      expected: { min: '2+3', max: '1+2' },
    },
    {
      name: 'priority factor: a discounted job loses a tie',
      input: snapshot()
        .servers(server('s1').cpu(5))
        .jobs(job('a').speed(linearInWorkers).priority(0.95), job('b').speed(linearInWorkers)),
      expected: { a: '1+1', b: '1+2' },
    },
    {
      name: 'exhaustion: minimum shapes go oldest first, the youngest waits',
      input: snapshot()
        .servers(server('s1').cpu(4))
        .jobs(
          job('a').arrival(30).speed(linearInWorkers),
          job('b').arrival(10).speed(linearInWorkers),
          job('c').arrival(20).speed(linearInWorkers),
        ),
      expected: { a: 'wait', b: '1+1', c: '1+1' },
    },
    {
      name: 'a job asking for a resource no server offers waits',
      input: snapshot()
        .servers(server('s1').cpu(8))
        .jobs(job('f').worker({ [CPU]: 1, 'example.com/fpga': 1 }), job('c').speed(peaksAtThree)),
      expected: { f: 'wait', c: '1+3' },
    },
    {
      name: 'a job with no remaining work keeps its minimum shape',
      input: snapshot().servers(server('s1').cpu(8)).jobs(job('done').remaining(0)),
      expected: { done: '1+1' },
    },
  ];
  it.each(cases)('$name', ({ input, expected, options }) => {
    const d = decideBy('optimus', input.build(), options);
    expect(Object.fromEntries(Object.keys(expected).map((id) => [id, shapeOf(d, id)]))).toEqual(expected);
  });

  it('invalid and duplicate job records wait with a reason; the others are scheduled', () => {
    const input = snapshot()
      .servers(server('s1').cpu(8))
      .jobs(job('bad').bounds({ minWorkers: 5, maxWorkers: 2 }), job('ok'), job('ok'))
      .build();
    const jobs = getPolicy('optimus').decide(input).jobs;
    expect(jobs.map((d) => [d.jobId, d.action === 'wait' ? d.reason : 'run'])).toEqual([
      ['bad', 'invalid job: maxWorkers 2 < minWorkers 5'],
      ['ok', 'run'],
      ['ok', 'duplicate job id in the snapshot'],
    ]);
  });
});
