import { describe, expect, it } from 'vitest';
import {
  CONTRACT_SERVERS,
  contractJob,
  describeExecutorContract,
  stepUntilReached,
  targetOf,
  type ExecutorHarness,
} from '../../../test/contracts/executor-contract';
import { SimBackend } from './sim-backend';
import type { Trace, TraceJob } from './trace';

const NAMES = ['start', 'resize', 'suspend', 'straggler', 'over', 'twice', 'rest', 'crash', 'timed'];

const trace: Trace = {
  format: 'optimus-trace',
  version: 1,
  name: 'executor-contract',
  seed: 1,
  cluster: { servers: CONTRACT_SERVERS.map((s) => ({ name: s.name, capacity: { ...s.capacity } })) },
  jobs: NAMES.map((name): TraceJob => {
    const spec = contractJob(name);
    return {
      id: `default/${name}`,
      arrival: 0,
      type: 'contract',
      mode: 'sync',
      psDemand: spec.psDemand,
      workerDemand: spec.workerDemand,
      minPs: 1,
      maxPs: 4,
      minWorkers: 1,
      maxWorkers: 4,
      globalBatch: 64,
      stepsPerEpoch: 100,
      speed: { kind: 'parametric', theta: [0.004, 0.1, 0.2, 0.01, 0.01] },
      work: { kind: 'steps', steps: 1e9 },
    };
  }),
};

/** The simulated cluster on virtual time: `settle` lets 10 s pass (a rollout's phases take 30 s). */
function simHarness(): ExecutorHarness & { backend: SimBackend; at(): number } {
  let now = 0;
  const backend = new SimBackend({
    trace,
    measured: new Map(),
    seed: 1,
    now: () => now,
    wallMs: () => now * 1000,
    sink: () => {},
  });
  return {
    backend,
    at: () => now,
    executor: backend.executor,
    observe: () => backend.observe(),
    submit: (job) => backend.admit(job),
    settle: async () => {
      const from = now;
      now += 10;
      backend.advance(from, now);
    },
    restartController: async () => {}, // the simulated executor remembers nothing between steps
    close: async () => {},
  };
}

describeExecutorContract('simulator', async () => simHarness());

describe('the simulated cluster on virtual time (restart-phases.ts)', () => {
  it('a resize takes the table’s time: checkpoint and exit, then the pod start; resources held meanwhile', async () => {
    const x = simHarness();
    const job = contractJob('timed');
    await x.submit(job);
    const one = [
      { role: 'ps' as const, index: 0, server: 'node-a', generation: 1 },
      { role: 'worker' as const, index: 0, server: 'node-a', generation: 1 },
    ];
    await stepUntilReached(x, job, targetOf(1, one));
    const startedAt = x.at();
    const two = one.map((t) => ({ ...t, server: 'node-b', generation: 2 }));
    await stepUntilReached(x, job, targetOf(2, two, { restart: true }));
    // 5 s checkpoint + 2 s exit (gone at +7), then an 8 s pod start: running after 15 s, in 10 s looks.
    expect(x.at() - startedAt).toBe(20);
    const state = x.backend.cluster.jobs.get('default/timed')!;
    expect(state.shape).toEqual({ ps: 1, workers: 1 });
    // Running at +18 (started at +10), its first step 15 s later.
    expect(state.pausedUntil).toBeCloseTo(startedAt + 18 + 15, 6);
    expect(x.backend.cluster.usage('node-a').cpu ?? 0).toBe(0);
    expect(x.backend.cluster.usage('node-b').cpu).toBe(2);
  });

  it('refuses a start that does not fit, and leaves nothing behind', async () => {
    const x = simHarness();
    const job = contractJob('timed');
    await x.submit(job);
    // 17 tasks of 1 cpu on a 16-cpu node.
    const many = [
      { role: 'ps' as const, index: 0, server: 'node-a', generation: 1 },
      ...Array.from({ length: 16 }, (_, index) => ({
        role: 'worker' as const,
        index,
        server: 'node-a',
        generation: 1,
      })),
    ];
    const r = await x.executor.step({
      jobId: 'default/timed',
      spec: job,
      target: targetOf(1, many),
      observed: undefined,
      step: { kind: 'start', tasks: many },
    });
    expect(r).toMatchObject({ kind: 'failed', error: expect.stringContaining('lacks cpu') });
    expect(x.backend.cluster.usage('node-a').cpu ?? 0).toBe(0);
    expect((await x.observe()).jobs.get('default/timed')?.tasks).toEqual([]);
  });
});
