/** Tiresias (2D-LAS, fixed shapes, fit-first, preemptive) through the registry. */
import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU } from '../../../shared/src/units';
import { gpuTask, job, server, snapshot } from './testing/builders';
import { decideBy, running, shapeOf } from './testing/decide';

const gpuServer = (name: string, gpus: number) => server(name).cpu(16).gpus(gpus);
const gpuJob = (id: string) =>
  job(id)
    .ps({ [CPU]: 1 })
    .worker(gpuTask(1));

describe('Tiresias', () => {
  it('runs every job at its fixed shape: the minimum, which a rigid job sets to what it requests', () => {
    const input = snapshot()
      .servers(gpuServer('g1', 8))
      .jobs(gpuJob('elastic').bounds({ minWorkers: 2 }), gpuJob('rigid').rigid({ ps: 1, workers: 3 }))
      .build();
    const d = decideBy('tiresias', input);
    expect([shapeOf(d, 'elastic'), shapeOf(d, 'rigid')]).toEqual(['1+2', '1+3']);
    expect(shapeOf(decideBy('tiresias', input, { fixedShape: { ps: 2, workers: 4 } }), 'rigid')).toBe('1+3');
  });

  it('a job in the first queue preempts one that attained more than the threshold', () => {
    // old has run 2,000 s on 2 GPUs (4,000 GPU-s > 3,600): queue 2. new has attained nothing.
    const input = snapshot()
      .at(2000)
      .servers(gpuServer('g1', 2))
      .jobs(
        gpuJob('old')
          .arrival(0)
          .rigid({ ps: 1, workers: 2 })
          .running({ ps: 1, workers: 2 }, { ps: ['g1'], workers: ['g1', 'g1'] })
          .runs([{ shape: { ps: 1, workers: 2 }, from: 0, to: null }]),
        gpuJob('new').arrival(1990).rigid({ ps: 1, workers: 2 }),
      )
      .build();
    const d = decideBy('tiresias', input);
    expect([shapeOf(d, 'new'), shapeOf(d, 'old')]).toEqual(['1+2', 'wait']);
    const old = d.get('old');
    expect(old?.action === 'wait' && old.reason).toMatch(/queue 2/);
  });

  it('below the threshold the older job keeps running (FIFO within a queue)', () => {
    const input = snapshot()
      .at(1000)
      .servers(gpuServer('g1', 2))
      .jobs(
        gpuJob('old')
          .arrival(0)
          .rigid({ ps: 1, workers: 2 })
          .running({ ps: 1, workers: 2 }, { ps: ['g1'], workers: ['g1', 'g1'] })
          .runs([{ shape: { ps: 1, workers: 2 }, from: 0, to: null }]),
        gpuJob('new').arrival(990).rigid({ ps: 1, workers: 2 }),
      )
      .build();
    const d = decideBy('tiresias', input);
    expect([shapeOf(d, 'old'), shapeOf(d, 'new')]).toEqual(['1+2', 'wait']);
    expect(running(d, 'old').placement.map((t) => t.server)).toEqual(['g1', 'g1', 'g1']);
  });

  it('a starved job is promoted back to the first queue ahead of later arrivals', () => {
    // starved ran 1,000 s on 4 GPUs (queue 2); at 9,000 it has waited 8 × 1,000 s and is promoted.
    const input = snapshot()
      .at(9100)
      .servers(gpuServer('g1', 4))
      .jobs(
        gpuJob('starved')
          .arrival(0)
          .rigid({ ps: 1, workers: 4 })
          .runs([{ shape: { ps: 1, workers: 4 }, from: 0, to: 1000 }]),
        gpuJob('fresh').arrival(9050).rigid({ ps: 1, workers: 4 }),
      )
      .build();
    expect(shapeOf(decideBy('tiresias', input), 'starved')).toBe('1+4');
    expect(shapeOf(decideBy('tiresias', input, { promoteKnob: 0 }), 'starved')).toBe('wait');
  });

  it('fit-first: a job that does not fit is skipped and a later one that fits runs', () => {
    const input = snapshot()
      .servers(gpuServer('g1', 2), gpuServer('g2', 2))
      .jobs(
        gpuJob('first').arrival(0).rigid({ ps: 1, workers: 3 }),
        gpuJob('big').arrival(1).rigid({ ps: 1, workers: 2 }).worker(gpuTask(1, 2)),
        gpuJob('small').arrival(2).rigid({ ps: 1, workers: 1 }),
      )
      .build();
    const d = decideBy('tiresias', input);
    expect([shapeOf(d, 'first'), shapeOf(d, 'big'), shapeOf(d, 'small')]).toEqual(['1+3', 'wait', '1+1']);
  });
});
