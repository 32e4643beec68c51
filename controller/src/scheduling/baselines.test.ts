import { describe, expect, it } from 'vitest';
import { GiB, RESOURCE_CPU as CPU, RESOURCE_MEMORY as MEM } from '../../../shared/src/units';
import { exact, job, server, snapshot } from './testing/builders';
import { decideBy, running, shapeOf } from './testing/decide';

const linearInWorkers = exact((_p, w) => w);
const servers = (d: ReturnType<typeof decideBy>, id: string) =>
  new Set(running(d, id).placement.map((t) => t.server));

describe('DRF baseline', () => {
  it('is work-conserving with a 1:1 ratio: equal jobs split the cluster equally', () => {
    const input = snapshot()
      .servers(server('s1').cpu(8), server('s2').cpu(8))
      .jobs(job('a'), job('b'))
      .build();
    const d = decideBy('drf', input);
    expect([shapeOf(d, 'a'), shapeOf(d, 'b')]).toEqual(['4+4', '4+4']);
  });

  it('equalises dominant shares, not task counts', () => {
    // a's tasks need 2 CPUs, b's 1 CPU: equal dominant shares mean b gets twice the pairs.
    const input = snapshot()
      .servers(server('s1').cpu(24))
      .jobs(
        job('a')
          .ps({ [CPU]: 2 })
          .worker({ [CPU]: 2 }),
        job('b'),
      )
      .build();
    const d = decideBy('drf', input);
    expect([shapeOf(d, 'a'), shapeOf(d, 'b')]).toEqual(['3+3', '6+6']);
  });

  it('ignores gain: grows a job whose extra tasks are useless', () => {
    const input = snapshot()
      .servers(server('s1').cpu(8))
      .jobs(job('a').speed(exact(() => 1)))
      .build();
    expect(shapeOf(decideBy('drf', input), 'a')).toBe('4+4');
  });

  it('spreads a job over servers, like the default Kubernetes scheduler', () => {
    const input = snapshot()
      .servers(server('s1').cpu(16), server('s2').cpu(16))
      .jobs(job('a').rigid({ ps: 2, workers: 2 }))
      .build();
    expect(servers(decideBy('drf', input), 'a')).toEqual(new Set(['s1', 's2']));
  });
});

describe('Tetris baseline', () => {
  it('gives resources to the shortest remaining job first, 1:1', () => {
    const input = snapshot()
      .servers(server('s1').cpu(10))
      .jobs(job('long').remaining(1e6), job('short').remaining(10).bounds({ maxPs: 3, maxWorkers: 3 }))
      .build();
    const d = decideBy('tetris', input);
    expect([shapeOf(d, 'short'), shapeOf(d, 'long')]).toEqual(['3+3', '2+2']);
  });

  it('packs a task where its demand aligns with the free resources', () => {
    const input = snapshot()
      .servers(server('cpu-rich').cpu(16).memoryGiB(4), server('mem-rich').cpu(4).memoryGiB(64))
      .jobs(
        job('cpu-heavy')
          .rigid({ ps: 1, workers: 1 })
          .ps({ [CPU]: 2, [MEM]: 0.5 * GiB })
          .worker({ [CPU]: 2, [MEM]: 0.5 * GiB }),
        job('mem-heavy')
          .rigid({ ps: 1, workers: 1 })
          .ps({ [CPU]: 0.5, [MEM]: 8 * GiB })
          .worker({ [CPU]: 0.5, [MEM]: 8 * GiB }),
      )
      .build();
    const d = decideBy('tetris', input);
    expect(servers(d, 'cpu-heavy')).toEqual(new Set(['cpu-rich']));
    expect(servers(d, 'mem-heavy')).toEqual(new Set(['mem-rich']));
  });
});

describe('FIFO and SRTF baselines (fixed shape)', () => {
  it('FIFO: the oldest job that does not fit blocks younger ones (head-of-line)', () => {
    const input = snapshot()
      .servers(server('s1').cpu(4))
      .jobs(
        job('first').arrival(0).rigid({ ps: 1, workers: 1 }),
        job('huge').arrival(1).rigid({ ps: 2, workers: 4 }),
        job('small').arrival(2).rigid({ ps: 1, workers: 1 }),
      )
      .build();
    const d = decideBy('fifo', input);
    expect([shapeOf(d, 'first'), shapeOf(d, 'huge'), shapeOf(d, 'small')]).toEqual(['1+1', 'wait', 'wait']);
    const small = d.get('small');
    expect(small?.action === 'wait' && small.reason).toMatch(/queued behind huge/);
  });

  it('SRTF: the shortest job runs first and a job that does not fit is skipped', () => {
    const input = snapshot()
      .servers(server('s1').cpu(5))
      .jobs(
        job('old-long').arrival(0).remaining(1e6).rigid({ ps: 1, workers: 2 }),
        job('new-short').arrival(9).remaining(10).rigid({ ps: 1, workers: 2 }),
        job('tiny').arrival(5).remaining(1e7).rigid({ ps: 1, workers: 1 }),
      )
      .build();
    const d = decideBy('srtf', input);
    expect([shapeOf(d, 'new-short'), shapeOf(d, 'old-long'), shapeOf(d, 'tiny')]).toEqual([
      '1+2',
      'wait',
      '1+1',
    ]);
  });

  it('the fixed shape is the minimum shape: idle resources do not grow a job', () => {
    const input = snapshot()
      .servers(server('s1').cpu(64))
      .jobs(job('a').speed(linearInWorkers).bounds({ minWorkers: 2 }))
      .build();
    expect(shapeOf(decideBy('fifo', input), 'a')).toBe('1+2');
    expect(shapeOf(decideBy('srtf', input), 'a')).toBe('1+2');
  });

  it('a configured fixed shape is clamped to each job’s bounds', () => {
    const input = snapshot()
      .servers(server('s1').cpu(64))
      .jobs(job('a').bounds({ maxWorkers: 3 }))
      .build();
    expect(shapeOf(decideBy('srtf', input, { fixedShape: { ps: 2, workers: 8 } }), 'a')).toBe('2+3');
  });
});

describe('ablations', () => {
  const input = () =>
    snapshot()
      .servers(server('s1').cpu(16), server('s2').cpu(16))
      .jobs(job('a').speed(exact((_p, w) => w - (w * w) / 6)))
      .build();

  it('optimus-allocation-only: marginal-gain shapes, spread over servers', () => {
    const d = decideBy('optimus-allocation-only', input());
    expect(shapeOf(d, 'a')).toBe('1+3');
    expect(servers(d, 'a')).toEqual(new Set(['s1', 's2']));
  });

  it('optimus-placement-only: DRF shapes, packed on the fewest servers', () => {
    const d = decideBy('optimus-placement-only', input());
    expect(shapeOf(d, 'a')).toBe('16+16');
    expect(servers(d, 'a')).toEqual(new Set(['s1', 's2']));
    const one = decideBy(
      'optimus-placement-only',
      snapshot()
        .servers(server('s1').cpu(16), server('s2').cpu(16))
        .jobs(job('a').bounds({ maxPs: 3, maxWorkers: 3 }))
        .build(),
    );
    expect(servers(one, 'a').size).toBe(1);
  });
});
