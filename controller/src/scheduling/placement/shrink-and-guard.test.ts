import { describe, expect, it } from 'vitest';
import type { PolicyOptions } from '../registry';
import { exact, gpuTask, job, server, snapshot, type SnapshotBuilder } from '../testing/builders';
import { decideBy, running, shapeOf, type RunDecision } from '../testing/decide';

const linear = exact((_p, w) => w);
const gpuServers = (d: RunDecision) =>
  [
    ...new Set(d.placement.filter((t) => t.server.startsWith('g')).map((t) => `${t.role}@${t.server}`)),
  ].sort();

describe('Optimus placement on a heterogeneous cluster: rules beyond the paper', () => {
  const shrinkCases: {
    name: string;
    input: SnapshotBuilder;
    options?: PolicyOptions;
    expected: Record<string, string>;
  }[] = [
    {
      // Totals: 10 cores, 3 GPUs → the allocator grants 1 PS + 3 workers, but the GPU server has
      // only 2 cores for workers: no placement holds 3.
      name: 'shrink-to-fit (default): a shape no placement holds runs smaller instead of waiting',
      input: snapshot()
        .servers(server('c1').cpu(8), server('g1').cpu(2).gpus(3))
        .jobs(job('g').speed(linear).worker(gpuTask(1))),
      expected: { g: '1+2' },
    },
    {
      name: 'shrink-to-fit off: the same job runs only at its minimum shape (backfill)',
      input: snapshot()
        .servers(server('c1').cpu(8), server('g1').cpu(2).gpus(3))
        .jobs(job('g').speed(linear).worker(gpuTask(1))),
      options: { shrink: false },
      expected: { g: '1+1' },
    },
    {
      name: 'shrink-to-fit and backfill off: the same job waits',
      input: snapshot()
        .servers(server('c1').cpu(8), server('g1').cpu(2).gpus(3))
        .jobs(job('g').speed(linear).worker(gpuTask(1))),
      options: { shrink: false, backfill: false },
      expected: { g: 'wait' },
    },
    {
      name: 'shrink-to-fit: a job whose minimum shape cannot be placed still waits',
      input: snapshot()
        .servers(server('c1').cpu(8), server('g1').cpu(2).gpus(3))
        .jobs(job('g').speed(linear).worker(gpuTask(1)).bounds({ minWorkers: 3 })),
      expected: { g: 'wait' },
    },
  ];
  it.each(shrinkCases)('$name', ({ input, options, expected }) => {
    const d = decideBy('optimus', input.build(), options);
    expect(Object.fromEntries(Object.keys(expected).map((id) => [id, shapeOf(d, id)]))).toEqual(expected);
  });

  // Two GPU servers of 4 cores / 2 GPUs, one CPU server; PS and workers take 2 cores each. Job y
  // (the smaller, placed first) fits 1 PS + 1 worker on one GPU server: all its cores, one GPU
  // idle and unusable. Job x then needs 3 GPU workers and finds room for only 2.
  const stranding = () =>
    snapshot()
      .servers(server('g1').cpu(4).gpus(2), server('g2').cpu(4).gpus(2), server('c1').cpu(8))
      .jobs(
        job('x')
          .speed(linear)
          .ps({ cpu: 2 })
          .worker(gpuTask(2))
          .bounds({ minPs: 2, maxPs: 2, minWorkers: 3, maxWorkers: 3 }),
        job('y').speed(linear).ps({ cpu: 2 }).worker(gpuTask(2)).bounds({ maxPs: 1, maxWorkers: 1 }),
      );

  it('stranding guard (default): no GPU is left idle next to cores a PS took; both jobs run', () => {
    const d = decideBy('optimus', stranding().build());
    expect([shapeOf(d, 'x'), shapeOf(d, 'y')]).toEqual(['2+3', '1+1']);
    // No PS on a GPU server: each would have taken the cores of a GPU.
    const onGpu = [...gpuServers(running(d, 'x')), ...gpuServers(running(d, 'y'))];
    expect(onGpu.filter((t) => t.startsWith('ps'))).toEqual([]);
  });

  it('stranding guard off: the even split strands the GPUs and job y waits', () => {
    const d = decideBy('optimus', stranding().build(), { strandingGuard: false });
    expect([shapeOf(d, 'x'), shapeOf(d, 'y')]).toEqual(['wait', '1+1']);
  });
});
