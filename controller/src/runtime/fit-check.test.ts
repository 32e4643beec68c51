import { describe, expect, it } from 'vitest';
import { GiB } from '../../../shared/src/units';
import type { ServerSnapshot } from '../scheduling/types';
import { neverFits, outsideLimits } from './fit-check';

const server = (name: string, cpu: number, memGiB: number, gpu = 0): ServerSnapshot => ({
  name,
  capacity: { cpu, memory: memGiB * GiB, ...(gpu > 0 && { 'nvidia.com/gpu': gpu }) },
  reserved: { cpu: cpu - 1 },
});
const servers = [server('a', 8, 32), server('b', 16, 16, 2)];
const demand = (cpu: number, memGiB: number, gpu = 0) => ({
  cpu,
  memory: memGiB * GiB,
  ...(gpu > 0 && { 'nvidia.com/gpu': gpu }),
});

describe('neverFits', () => {
  const cases: {
    name: string;
    ps: ReturnType<typeof demand>;
    worker: ReturnType<typeof demand>;
    want: RegExp | null;
  }[] = [
    { name: 'fits on the first server', ps: demand(1, 2), worker: demand(2, 4), want: null },
    // Reserved resources come and go: only capacity decides "never".
    {
      name: 'fits an empty server although both are busy now',
      ps: demand(1, 2),
      worker: demand(8, 8),
      want: null,
    },
    {
      name: 'each resource fits somewhere, all on one',
      ps: demand(1, 2),
      worker: demand(12, 8, 1),
      want: null,
    },
    {
      name: 'worker too large for every server',
      ps: demand(1, 2),
      worker: demand(32, 4),
      want: /a worker needs cpu 32 cores, memory 4 GiB.*largest: cpu 16 cores, memory 32 GiB/,
    },
    {
      name: 'cpu fits one, memory the other',
      ps: demand(12, 24),
      worker: demand(1, 1),
      want: /a parameter server needs cpu 12 cores, memory 24 GiB/,
    },
    {
      name: 'a resource no server offers',
      ps: demand(1, 1),
      worker: demand(1, 1, 4),
      want: /nvidia.com\/gpu 4.*nvidia.com\/gpu 2/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const got = neverFits({ psDemand: c.ps, workerDemand: c.worker }, servers);
      if (c.want === null) expect(got).toBeNull();
      else expect(got).toMatch(c.want);
    });

  // Issue 30: `memory: 2` (2 bytes, as in Kubernetes) was reported as "memory 0 GiB".
  it('says memory in bytes in the unit that shows the figure, and what a GiB count would be', () => {
    const got = neverFits({ psDemand: { cpu: 1 }, workerDemand: { cpu: 64, memory: 2 } }, servers);
    expect(got).toBe(
      'a worker needs cpu 64 cores, memory 2 B, more than any server offers (largest: cpu 16 cores, memory 32 GiB); memory is in bytes: 2 GiB is 2147483648',
    );
  });

  it('refuses nothing while no server is known', () => {
    expect(neverFits({ psDemand: demand(999, 999), workerDemand: demand(1, 1) }, [])).toBeNull();
  });
});

describe('outsideLimits', () => {
  const spec = { minPs: 1, maxPs: 4, minWorkers: 2, maxWorkers: 8 };
  it.each([
    [{ ps: 2, workers: 4 }, null],
    [{ ps: 5, workers: 4 }, /5 PS is outside the job's limits 1–4/],
    [{ ps: 1, workers: 1 }, /1 worker is outside the job's limits 2–8/],
    [{ ps: 9, workers: 9 }, /9 PS .*; 9 workers/],
  ])('%o', (shape, want) => {
    const got = outsideLimits(spec, shape);
    if (want === null) expect(got).toBeNull();
    else expect(got).toMatch(want);
  });
});
