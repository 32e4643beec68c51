/** Scenario tests: small traces through the real engine, outcomes asserted with tolerances. */
import { describe, expect, it } from 'vitest';
import { GiB } from '../../../shared/src/units';
import type { Decision, Policy, PolicyInput } from '../scheduling/types';
import { getPolicy } from '../scheduling/registry';
import { simulate, type SimulationOptions } from './engine';
import { loadMeasured } from './load';
import { productionModels } from './models';
import { ASSUMED, scaledTo } from './restart-phases';
import type { Trace, TraceJob } from './trace';
import { buildWorkload } from './workloads';

const THETA = [0.004, 0.1, 0.2, 0.01, 0.01];
const trueSyncSpeed = (p: number, w: number): number =>
  1 / (THETA[0]! * (64 / w) + THETA[1]! + (THETA[2]! * w) / p + THETA[3]! * w + THETA[4]! * p);

/** The runtime reacts to an arrival and to an exit within a round's delay (well under a second). */
const REACTION_SEC = 1;
/** A first start takes time too (ADR 0035): the pod starts, then the first step comes. */
const START_SEC = ASSUMED.podStartSec + ASSUMED.firstStepSec;

const aJob = (over: Partial<TraceJob> = {}): TraceJob => ({
  id: 'default/solo',
  arrival: 0,
  type: 'synthetic',
  mode: 'sync',
  psDemand: { cpu: 2, memory: 4 * GiB },
  workerDemand: { cpu: 2, memory: 4 * GiB },
  minPs: 1,
  maxPs: 4,
  minWorkers: 1,
  maxWorkers: 4,
  globalBatch: 64,
  stepsPerEpoch: 100,
  speed: { kind: 'parametric', theta: THETA },
  work: { kind: 'steps', steps: 3000 },
  ...over,
});

const aTrace = (jobs: TraceJob[]): Trace => ({
  format: 'optimus-trace',
  version: 1,
  name: 'test',
  seed: 1,
  cluster: {
    servers: ['s1', 's2', 's3'].map((name) => ({ name, capacity: { cpu: 16, memory: 64 * GiB } })),
  },
  jobs,
});

/** A test policy: every job 1 PS on s1 and 1 worker on `workerServer(round)` (remote pairs only). */
function fixedPolicy(workerServer: (now: number) => string): Policy {
  return {
    name: 'fixed',
    description: 'test',
    decide: (input: PolicyInput): Decision => ({
      jobs: input.jobs.map((j) => ({
        jobId: j.id,
        action: 'run',
        shape: { ps: 1, workers: 1 },
        placement: [
          { role: 'ps', index: 0, server: 's1' },
          { role: 'worker', index: 0, server: workerServer(input.now) },
        ],
        replaceWorkers: [],
      })),
    }),
  };
}

const base = (trace: Trace, policy: Policy, over: Partial<SimulationOptions> = {}): SimulationOptions => ({
  trace,
  measured: new Map(),
  policy,
  estimation: { kind: 'oracle', error: 0 },
  models: productionModels,
  seed: 1,
  ...over,
});

describe('simulator scenarios', () => {
  it('a job alone on an empty cluster finishes at its true speed', async () => {
    const r = await simulate(
      base(
        aTrace([aJob()]),
        fixedPolicy(() => 's2'),
      ),
    );
    expect(r.jobs).toHaveLength(1);
    // Plus what the controller takes to react: the round after the arrival, and after the exit.
    expect(r.jobs[0]!.jct).toBeGreaterThanOrEqual(3000 / trueSyncSpeed(1, 1) + START_SEC);
    expect(r.jobs[0]!.jct).toBeLessThan(3000 / trueSyncSpeed(1, 1) + START_SEC + REACTION_SEC);
    expect(r.restarts).toBe(0);
  });

  it('a job alone under Optimus is at least as fast as at the smallest shape', async () => {
    const r = await simulate(base(aTrace([aJob()]), getPolicy('optimus')));
    const alone = 3000 / trueSyncSpeed(1, 1);
    expect(r.jobs[0]!.jct).toBeLessThan(alone);
    expect(r.jobs[0]!.jct).toBeGreaterThan(alone / 4);
  });

  it('charges the restart pause for every resize, and the first start its pod start and first step', async () => {
    // Moving the worker between s2 and s3 every round is a resize (checkpoint → restart) each time.
    const hop = fixedPolicy((now) => (Math.floor(now / 600) % 2 === 0 ? 's2' : 's3'));
    const free = await simulate(base(aTrace([aJob()]), hop, { restartPauseSec: 0 }));
    const paid = await simulate(base(aTrace([aJob()]), hop, { restartPauseSec: 45 }));
    expect(paid.restarts).toBeGreaterThan(0);
    const first = scaledTo(45);
    const charged = paid.restarts * 45 + first.podStartSec + first.firstStepSec;
    // Within a second: the runtime looks at a rollout within a round's delay of each of its moves.
    expect(Math.abs(paid.jobs[0]!.jct - free.jobs[0]!.jct - charged)).toBeLessThan(REACTION_SEC);
  });

  it('a slow server slows a sync job to its slowest worker, an async one by that worker alone', async () => {
    const four = (workerServer: string) => ({
      name: 'four',
      description: 'test',
      decide: (input: PolicyInput): Decision => ({
        jobs: input.jobs.map((j) => ({
          jobId: j.id,
          action: 'run' as const,
          shape: { ps: 1, workers: 4 },
          placement: [
            { role: 'ps' as const, index: 0, server: 's1' },
            ...[0, 1, 2].map((index) => ({ role: 'worker' as const, index, server: 's2' })),
            { role: 'worker' as const, index: 3, server: workerServer },
          ],
          replaceWorkers: [],
        })),
      }),
    });
    const slow = (mode: 'sync' | 'async') => {
      const t = aTrace([
        aJob({ mode, speed: { kind: 'parametric', theta: mode === 'sync' ? THETA : THETA.slice(1) } }),
      ]);
      return { ...t, cluster: { ...t.cluster, slowdowns: [{ server: 's3', from: 0, factor: 2 }] } };
    };
    for (const mode of ['sync', 'async'] as const) {
      const fast = await simulate(base(slow(mode), four('s2')));
      const slowed = await simulate(base(slow(mode), four('s3')));
      const expected = mode === 'sync' ? 2 : 1 / ((3 + 1 / 2) / 4);
      expect(slowed.jobs[0]!.jct / fast.jobs[0]!.jct).toBeCloseTo(expected, 1);
    }
  });

  it('a later arrival waits for its arrival time and both jobs finish', async () => {
    const trace = aTrace([aJob(), aJob({ id: 'default/late', arrival: 1000 })]);
    const r = await simulate(
      base(
        trace,
        fixedPolicy(() => 's2'),
      ),
    );
    const late = r.jobs.find((j) => j.id === 'default/late')!;
    expect(late.arrival).toBe(1000);
    // The worker shares s2 but demands are per task: both run at full speed.
    expect(late.jct).toBeGreaterThanOrEqual(3000 / trueSyncSpeed(1, 1) + START_SEC);
    expect(late.jct).toBeLessThan(3000 / trueSyncSpeed(1, 1) + START_SEC + REACTION_SEC);
  });

  it('an online run is on average no better than an oracle run (paper workload, Optimus)', async () => {
    const measured = loadMeasured();
    let online = 0;
    let oracle = 0;
    for (const seed of [1, 2]) {
      const trace = buildWorkload('paper', { seed, measured, jobs: 30 });
      const o = {
        trace,
        measured,
        policy: getPolicy('optimus'),
        models: productionModels,
        seed,
      };
      online += (await simulate({ ...o, estimation: { kind: 'online' } })).avgJct;
      oracle += (await simulate({ ...o, estimation: { kind: 'oracle', error: 0 } })).avgJct;
    }
    expect(oracle).toBeLessThanOrEqual(online * 1.02);
  });
});
