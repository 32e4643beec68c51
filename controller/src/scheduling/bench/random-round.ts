/**
 * A random heterogeneous cluster and job mix for the scheduling benchmark, seeded and pure.
 * Sized like the paper's scalability test (§6.4: 4,000 jobs, ~100,000 tasks, 16,000 nodes):
 * three server types (CPU-only, 4-GPU, 8-GPU), a third of the jobs training on GPUs, sync and
 * async speed models with coefficients around the paper's fitted ResNet-50 values, and per-job
 * maxima that make the allocation end near 25 tasks per job.
 */
import { GiB, RESOURCE_CPU, RESOURCE_GPU, RESOURCE_MEMORY } from '../../../../shared/src/units';
import { seededRandom } from '../../models/random';
import { eq3, eq4, job, server, snapshot } from '../testing/builders';
import type { PolicyInput } from '../types';

export interface RandomRoundOptions {
  readonly jobs: number;
  readonly nodes: number;
  readonly seed: number;
}

export function randomRound({ jobs, nodes, seed }: RandomRoundOptions): PolicyInput {
  const rnd = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const b = snapshot().restartCost(30);
  for (let i = 0; i < nodes; i++) {
    const kind = rnd();
    if (kind < 0.6) b.servers(server(`cpu-${i}`).cpu(32).memoryGiB(128));
    else if (kind < 0.9) b.servers(server(`gpu4-${i}`).cpu(16).memoryGiB(64).gpus(4));
    else b.servers(server(`gpu8-${i}`).cpu(32).memoryGiB(256).gpus(8));
  }
  for (let i = 0; i < jobs; i++) {
    const gpu = rnd() < 1 / 3;
    const sync = rnd() < 0.5;
    const j = job(`job-${i}`)
      .arrival(int(0, 12_000))
      .remaining(int(1_000, 200_000))
      .ps({ [RESOURCE_CPU]: int(1, 4), [RESOURCE_MEMORY]: int(2, 8) * GiB })
      .worker(
        gpu
          ? { [RESOURCE_CPU]: int(1, 3), [RESOURCE_MEMORY]: int(4, 12) * GiB, [RESOURCE_GPU]: 1 }
          : { [RESOURCE_CPU]: int(2, 6), [RESOURCE_MEMORY]: int(4, 16) * GiB },
      )
      .bounds({ maxPs: int(8, 16), maxWorkers: int(12, 22) });
    const jitter = () => 0.5 + rnd();
    if (sync)
      j.sync().speed(
        eq4({ theta: [1.02 * jitter(), 2.78 * jitter(), 4.92 * jitter(), 0.001, 0.02], batch: 32 }),
      );
    else j.async().speed(eq3([2.83 * jitter(), 3.92 * jitter(), 0.001, 0.11 * jitter()]));
    b.jobs(j);
  }
  return b.build();
}
