import { describe, expect, it } from 'vitest';
import {
  CONTRACT_SERVERS,
  describeExecutorContract,
  type ExecutorHarness,
} from '../../../test/contracts/executor-contract';
import { GiB } from '../../../shared/src/units';
import { SimCluster } from './sim-executor';

async function makeHarness(): Promise<ExecutorHarness> {
  const cluster = new SimCluster(CONTRACT_SERVERS, 30);
  return {
    executor: cluster,
    submit: async (job) => cluster.submit(job),
    settle: async () => undefined,
    running: async (id) => {
      const j = cluster.jobs.get(id);
      return j?.shape ? { shape: j.shape, placement: j.placement } : null;
    },
    restarts: async (id) => cluster.jobs.get(id)?.restarts ?? 0,
    close: async () => undefined,
  };
}

describeExecutorContract('simulator', makeHarness);

describe('SimCluster capacity', () => {
  const job = {
    id: 'default/big',
    psDemand: { cpu: 10, memory: GiB },
    workerDemand: { cpu: 10, memory: GiB },
  };

  it('refuses a start that does not fit and leaves nothing behind', async () => {
    const c = new SimCluster(CONTRACT_SERVERS, 30);
    c.submit(job);
    const placement = [
      { role: 'ps' as const, index: 0, server: 'node-a' },
      { role: 'worker' as const, index: 0, server: 'node-a' },
    ];
    const r = await c.execute({
      actions: [{ kind: 'start', jobId: job.id, shape: { ps: 1, workers: 1 }, placement }],
    });
    expect(r.failed).toHaveLength(1);
    expect(c.jobs.get(job.id)?.shape).toBeNull();
    expect(c.usage('node-a').cpu ?? 0).toBe(0);
  });

  it('charges the restart pause on a resize, not on a first start', async () => {
    const c = new SimCluster(CONTRACT_SERVERS, 30);
    c.submit(job);
    const one = [
      { role: 'ps' as const, index: 0, server: 'node-a' },
      { role: 'worker' as const, index: 0, server: 'node-b' },
    ];
    c.now = 100;
    await c.execute({
      actions: [{ kind: 'start', jobId: job.id, shape: { ps: 1, workers: 1 }, placement: one }],
    });
    expect(c.jobs.get(job.id)?.pausedUntil).toBe(0);
    c.now = 700;
    const moved = [one[0]!, { role: 'worker' as const, index: 0, server: 'node-c' }];
    await c.execute({
      actions: [
        {
          kind: 'resize',
          jobId: job.id,
          from: { ps: 1, workers: 1 },
          shape: { ps: 1, workers: 1 },
          placement: moved,
        },
      ],
    });
    expect(c.jobs.get(job.id)?.pausedUntil).toBe(730);
    expect(c.jobs.get(job.id)?.restarts).toBe(1);
  });
});
