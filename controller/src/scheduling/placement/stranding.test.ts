import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU, RESOURCE_GPU as GPU, type Resources } from '../../../../shared/src/units';
import { prepare } from '../core/prepare';
import { toVector } from '../core/resource-vector';
import { gpuTask, job, server, snapshot } from '../testing/builders';
import { guardedFit, strandingReserve } from './stranding';

// GPU workers take 2 cores per GPU: each free GPU keeps 2 cores back.
const input = prepare(
  snapshot()
    .servers(server('g1').cpu(8).gpus(2), server('c1').cpu(16))
    .jobs(
      job('a')
        .ps({ [CPU]: 3 })
        .worker(gpuTask(2)),
    )
    .build(),
);
const v = (r: Resources) => toVector(input.space, r);
const fit = guardedFit(strandingReserve(input));

describe('stranding guard: a placement may not leave a free GPU without the cores to use it', () => {
  const cases: { name: string; free: Resources; demand: Resources; expected: boolean }[] = [
    {
      name: 'a worker on an empty GPU server',
      free: { [CPU]: 8, [GPU]: 2 },
      demand: gpuTask(2),
      expected: true,
    },
    {
      name: 'a PS leaving 2 free GPUs with 5 cores (4 needed)',
      free: { [CPU]: 8, [GPU]: 2 },
      demand: { [CPU]: 3 },
      expected: true,
    },
    {
      name: 'a PS leaving 2 free GPUs with 3 cores is refused',
      free: { [CPU]: 6, [GPU]: 2 },
      demand: { [CPU]: 3 },
      expected: false,
    },
    {
      name: 'a worker taking the last GPU may take the last cores',
      free: { [CPU]: 2, [GPU]: 1 },
      demand: gpuTask(2),
      expected: true,
    },
    { name: 'a CPU-only server is not guarded', free: { [CPU]: 3 }, demand: { [CPU]: 3 }, expected: true },
    {
      name: 'what does not fit is refused',
      free: { [CPU]: 2, [GPU]: 2 },
      demand: { [CPU]: 3 },
      expected: false,
    },
  ];
  it.each(cases)('$name', ({ free, demand, expected }) => {
    expect(fit(v(free), v(demand))).toBe(expected);
  });

  it('a cluster of one kind of server has no rare resource: the guard is plain fits', () => {
    const uniform = prepare(
      snapshot().servers(server('s1').cpu(8), server('s2').cpu(8)).jobs(job('a')).build(),
    );
    expect(strandingReserve(uniform).size).toBe(0);
  });
});
