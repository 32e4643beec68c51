/**
 * Tiresias through the shipped runtime: the run history the runtime puts in every snapshot is what
 * its attained service is derived from, so a newcomer preempts a job that attained more.
 */
import { describe, expect, it } from 'vitest';
import { GiB } from '../../../shared/src/units';
import { getPolicy } from '../scheduling/registry';
import type { Policy, PolicyInput } from '../scheduling/types';
import { simulate } from './engine';
import { productionModels } from './models';
import type { Trace, TraceJob } from './trace';

const THETA = [0.004, 0.1, 0.2, 0.01, 0.01];
const steps = (sec: number) => sec / (THETA[0]! * 64 + THETA[1]! + THETA[2]! + THETA[3]! + THETA[4]!); // at 1 + 1

// One server that holds one 1 + 1 job (each task 4 cores).
const job = (id: string, arrival: number, sec: number): TraceJob => ({
  id: `default/${id}`,
  arrival,
  type: 'synthetic',
  mode: 'sync',
  psDemand: { cpu: 4, memory: GiB },
  workerDemand: { cpu: 4, memory: GiB },
  minPs: 1,
  maxPs: 1,
  minWorkers: 1,
  maxWorkers: 1,
  globalBatch: 64,
  stepsPerEpoch: 100,
  speed: { kind: 'parametric', theta: THETA },
  work: { kind: 'steps', steps: steps(sec) },
});

const trace: Trace = {
  format: 'optimus-trace',
  version: 1,
  name: 'tiresias',
  seed: 1,
  cluster: { servers: [{ name: 's1', capacity: { cpu: 8, memory: 64 * GiB } }] },
  jobs: [job('long', 0, 20_000), job('short', 5000, 1000)],
};

const run = (policy: Policy) =>
  simulate({
    trace,
    measured: new Map(),
    policy,
    estimation: { kind: 'online' },
    models: productionModels,
    seed: 1,
    intervalSec: 300,
  });

describe('Tiresias in the simulator', () => {
  it('the runtime hands the policy each job’s run history on the policy’s clock', async () => {
    const seen: PolicyInput[] = [];
    const tiresias = getPolicy('tiresias');
    await run({ ...tiresias, decide: (input) => (seen.push(input), tiresias.decide(input)) });
    const long = seen.at(-1)?.jobs.find((j) => j.id === 'default/long');
    const first = long?.runs?.[0];
    expect(first?.from).toBeGreaterThanOrEqual(0);
    expect(first?.from).toBeLessThan(5);
    expect(seen.every((i) => i.jobs.every((j) => (j.runs ?? []).every((r) => r.from <= i.now)))).toBe(true);
  });

  it('a newcomer preempts a job past the threshold; FIFO makes it wait', async () => {
    // long has run 5,000 s on 1 worker (5,000 "GPU"-s > 3,600) when short arrives.
    const tiresias = await run(getPolicy('tiresias'));
    const fifo = await run(getPolicy('fifo'));
    const jct = (r: typeof fifo, id: string) => r.jobs.find((j) => j.id === `default/${id}`)!.jct;
    expect(jct(tiresias, 'short')).toBeLessThan(1000 + 400);
    expect(jct(fifo, 'short')).toBeGreaterThan(5000);
    expect(tiresias.restarts).toBeGreaterThan(0);
  });
});
