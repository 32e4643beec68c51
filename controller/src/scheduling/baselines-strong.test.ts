/** The strengthened baselines: DRF's progressive filling, the fill-the-head queue baselines, Tetris's stop. */
import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU } from '../../../shared/src/units';
import { exact, job, server, snapshot } from './testing/builders';
import { decideBy, running, shapeOf } from './testing/decide';

// Four servers with 1.5 free cores each: 6 cores in aggregate, but one 1-core task per server.
const fragmented = () =>
  [1, 2, 3, 4].map((i) =>
    server(`s${i}`)
      .cpu(4)
      .reserved({ [CPU]: 2.5 }),
  );

describe('DRF: progressive filling on the servers (never waits while a smaller share fits)', () => {
  it.each([
    // Aggregate DRF sizes the job 3+3 (6 cores); as a gang no spread holds it.
    { policy: 'drf-gang', expected: 'wait' },
    { policy: 'drf', expected: '2+2' },
  ])('$policy on a fragmented cluster: $expected', ({ policy, expected }) => {
    const input = snapshot()
      .servers(...fragmented())
      .jobs(job('a'))
      .build();
    expect(shapeOf(decideBy(policy, input), 'a')).toBe(expected);
  });

  it('gives every job its first bundle before any job grows, then equalises dominant shares', () => {
    const input = snapshot()
      .servers(server('s1').cpu(10))
      .jobs(
        job('old').arrival(0),
        job('mid').arrival(1),
        job('new')
          .arrival(2)
          .ps({ [CPU]: 2 })
          .worker({ [CPU]: 2 }),
      )
      .build();
    const d = decideBy('drf', input);
    // new's pair costs 4 cores: first bundles 2 + 2 + 4 = 8, the last 2 cores go to old (share 0.2).
    expect([shapeOf(d, 'old'), shapeOf(d, 'mid'), shapeOf(d, 'new')]).toEqual(['2+2', '1+1', '1+1']);
  });

  it('a running job whose share does not change stays on its servers (no restart)', () => {
    // a runs 1+1 on s2 (spread would pick the emptier s1); b is new. Each keeps one pair.
    const input = snapshot()
      .servers(server('s1').cpu(2), server('s2').cpu(2))
      .jobs(
        job('a')
          .arrival(0)
          .bounds({ maxPs: 1, maxWorkers: 1 })
          .running({ ps: 1, workers: 1 }, { ps: ['s2'], workers: ['s2'] }),
        job('b').arrival(5).bounds({ maxPs: 1, maxWorkers: 1 }),
      )
      .build();
    const d = decideBy('drf', input);
    expect(running(d, 'a').placement.map((t) => t.server)).toEqual(['s2', 's2']);
    expect(running(d, 'b').placement.map((t) => t.server)).toEqual(['s1', 's1']);
  });

  it('a job whose first bundle finds no server waits with the reason', () => {
    const input = snapshot().servers(server('s1').cpu(1)).jobs(job('a')).build();
    const a = decideBy('drf', input).get('a');
    expect(a?.action).toBe('wait');
  });

  it('spreads a job over servers like the default Kubernetes scheduler', () => {
    const input = snapshot()
      .servers(server('s1').cpu(16), server('s2').cpu(16))
      .jobs(job('a').rigid({ ps: 2, workers: 2 }))
      .build();
    expect(new Set(running(decideBy('drf', input), 'a').placement.map((t) => t.server))).toEqual(
      new Set(['s1', 's2']),
    );
  });
});

describe('FIFO / SRTF, filling the head of the queue (DL2 simulator practice)', () => {
  const queue = () =>
    snapshot()
      .servers(server('s1').cpu(8))
      .jobs(
        job('first').arrival(0).remaining(1e6).bounds({ maxPs: 3, maxWorkers: 3 }),
        job('second').arrival(1).remaining(10).bounds({ maxPs: 3, maxWorkers: 3 }),
        job('third').arrival(2).remaining(100),
      );
  it.each([
    { policy: 'fifo-fill', expected: { first: '3+3', second: '1+1', third: 'wait' } },
    { policy: 'srtf-fill', expected: { second: '3+3', third: '1+1', first: 'wait' } },
    { policy: 'fifo', expected: { first: '1+1', second: '1+1', third: '1+1' } },
  ])('$policy', ({ policy, expected }) => {
    const d = decideBy(policy, queue().build());
    expect(Object.fromEntries(Object.keys(expected).map((id) => [id, shapeOf(d, id)]))).toEqual(expected);
  });

  it('fifo-fill: a head job whose first bundle finds no room blocks the later ones', () => {
    const input = snapshot()
      .servers(server('s1').cpu(4))
      .jobs(
        job('first').arrival(0).bounds({ maxPs: 1, maxWorkers: 1 }),
        job('huge')
          .arrival(1)
          .rigid({ ps: 2, workers: 2 })
          .ps({ [CPU]: 2 }),
        job('small').arrival(2).bounds({ maxPs: 1, maxWorkers: 1 }),
      )
      .build();
    const d = decideBy('fifo-fill', input);
    expect([shapeOf(d, 'first'), shapeOf(d, 'huge'), shapeOf(d, 'small')]).toEqual(['1+1', 'wait', 'wait']);
  });
});

describe('Tetris: no whole-pool gangs', () => {
  it.each([
    // The target (3+3 on the aggregate 6 cores) finds no servers as a gang; pair by pair it reaches 2+2.
    { policy: 'tetris-gang', expected: 'wait' },
    { policy: 'tetris', expected: '2+2' },
  ])('$policy on a fragmented cluster: $expected', ({ policy, expected }) => {
    const input = snapshot()
      .servers(...fragmented())
      .jobs(job('a'))
      .build();
    expect(shapeOf(decideBy(policy, input), 'a')).toBe(expected);
  });

  it('a job whose speed model is still a flat guess grows (the interval may speed it up)', () => {
    const flat = {
      predict: () => ({ stepsPerSec: 1, lower: 0.5, upper: 2 }),
    };
    const input = snapshot()
      .servers(server('s1').cpu(8))
      .jobs(job('a').speed(flat).bounds({ maxPs: 4, maxWorkers: 4 }))
      .build();
    expect(shapeOf(decideBy('tetris', input), 'a')).toBe('4+4');
    expect(shapeOf(decideBy('tetris-gang', input), 'a')).toBe('1+1');
  });
});

describe('Tetris with Optimus estimates', () => {
  // Speed peaks at 3 workers: w − w²/6.
  const peaked = exact((_p, w) => w - (w * w) / 6);
  it.each([
    { options: {}, expected: '3+3' },
    { options: { untilNoSpeedUp: false }, expected: '8+8' },
  ])('stops growing where the estimate stops speeding up ($options)', ({ options, expected }) => {
    const input = snapshot()
      .servers(server('s1').cpu(16))
      .jobs(job('a').speed(peaked).bounds({ maxPs: 8, maxWorkers: 8 }))
      .build();
    expect(shapeOf(decideBy('tetris', input, options), 'a')).toBe(expected);
  });
});
