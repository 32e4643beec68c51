/** `optimus-paper`: the paper's Optimus, every rule of ours off — and each back on by option. */
import { describe, expect, it } from 'vitest';
import { exact, gpuTask, job, server, snapshot } from './testing/builders';
import { decideBy, running, shapeOf } from './testing/decide';

const linear = exact((_p, w) => w);
const superLinear = exact((_p, w) => w * w);
const pairsOnly = exact((p, w) => Math.min(p, w));

describe('optimus-paper allocation (Eq. 9)', () => {
  it('gain in seconds: the extra tasks go to the longest job (ours: to the one they speed up most)', () => {
    const input = snapshot()
      .servers(server('s1').cpu(6))
      .jobs(job('long').speed(linear).remaining(1000), job('short').speed(superLinear).remaining(100))
      .build();
    const paper = decideBy('optimus-paper', input);
    const ours = decideBy('optimus', input);
    expect([shapeOf(paper, 'long'), shapeOf(paper, 'short')]).toEqual(['1+3', '1+1']);
    expect([shapeOf(ours, 'long'), shapeOf(ours, 'short')]).toEqual(['1+1', '1+3']);
  });

  it('one task at a time: stops where neither a PS nor a worker alone helps', () => {
    const input = snapshot()
      .servers(server('s1').cpu(64))
      .jobs(job('a').speed(pairsOnly).bounds({ maxPs: 3, maxWorkers: 3 }))
      .build();
    expect(shapeOf(decideBy('optimus-paper', input), 'a')).toBe('1+1');
    expect(shapeOf(decideBy('optimus-paper', input, { lookAhead: true }), 'a')).toBe('3+3');
  });

  it('no restart cost: a running job gives up its worker to an equal gain elsewhere', () => {
    const input = snapshot()
      .restartCost(30)
      .servers(server('s1').cpu(5))
      .jobs(
        job('a-new').speed(linear).remaining(1000),
        job('b-run')
          .speed(linear)
          .remaining(1000)
          .running({ ps: 1, workers: 2 }, { ps: ['s1'], workers: ['s1', 's1'] }),
      )
      .build();
    const d = decideBy('optimus-paper', input);
    expect([shapeOf(d, 'a-new'), shapeOf(d, 'b-run')]).toEqual(['1+2', '1+1']);
  });
});

describe('optimus-paper placement (Theorem 1)', () => {
  // Totals 10 cores / 3 GPUs: the allocator grants 1 + 3, no server holds three 1-core GPU workers.
  const tooBig = () =>
    snapshot()
      .servers(server('c1').cpu(8), server('g1').cpu(2).gpus(3))
      .jobs(job('g').speed(linear).worker(gpuTask(1)));

  it('no shrink-to-fit: a shape no placement holds waits', () => {
    expect(shapeOf(decideBy('optimus-paper', tooBig().build()), 'g')).toBe('wait');
    expect(shapeOf(decideBy('optimus-paper', tooBig().build(), { shrink: true }), 'g')).toBe('1+2');
  });

  it('even split on the fewest servers: 2 PS + 4 workers on 2 servers, 1 + 2 each', () => {
    const input = snapshot()
      .servers(server('s1').cpu(3), server('s2').cpu(3), server('s3').cpu(3))
      .jobs(job('a').rigid({ ps: 2, workers: 4 }))
      .build();
    const perServer = new Map<string, string>();
    for (const t of running(decideBy('optimus-paper', input), 'a').placement)
      perServer.set(t.server, `${perServer.get(t.server) ?? ''}${t.role === 'ps' ? 'P' : 'W'}`);
    expect([...perServer.values()].map((v) => [...v].sort().join(''))).toEqual(['PWW', 'PWW']);
  });

  it('strict Theorem 1: PS must sit beside workers on GPU servers; with the fallback they go to CPU servers', () => {
    // The GPU server's 3 cores hold the 3 workers but not the PS too; the CPU server takes no worker.
    const input = snapshot()
      .servers(server('c1').cpu(8), server('g1').cpu(3).gpus(4))
      .jobs(job('a').ps({ cpu: 1 }).worker(gpuTask(1)).rigid({ ps: 1, workers: 3 }))
      .build();
    expect(shapeOf(decideBy('optimus-paper', input, { unevenFallback: false }), 'a')).toBe('wait');
    const ps = running(decideBy('optimus-paper', input), 'a').placement.filter((t) => t.role === 'ps');
    expect(ps.map((t) => t.server)).toEqual(['c1']);
  });
});
