/**
 * Jobs of fixed work (DL2's traces): the runtime is never told how much work a job has. Every such
 * job gets the same convergence rule; the work is only in its loss curve, which the runtime must
 * fit. The explicit `declaredEpochs` mode hands it the work instead, and is reported as such.
 */
import { describe, expect, it } from 'vitest';
import { GiB } from '../../../shared/src/units';
import { getPolicy } from '../scheduling/registry';
import type { JobSnapshot, PolicyInput } from '../scheduling/types';
import { ruleOf, simulate } from './engine';
import type { Estimation } from './estimator';
import { convergenceEpoch, resolveWork } from './loss-curve';
import { productionModels } from './models';
import type { TraceJob } from './trace';

const THETA = [0.004, 0.1, 0.2, 0.01, 0.01];
const fixed = (id: string, steps: number): TraceJob => ({
  id: `default/${id}`,
  arrival: 0,
  type: 'synthetic',
  mode: 'sync',
  psDemand: { cpu: 2, memory: GiB },
  workerDemand: { cpu: 2, memory: GiB },
  minPs: 1,
  maxPs: 2,
  minWorkers: 1,
  maxWorkers: 2,
  globalBatch: 64,
  stepsPerEpoch: 100,
  speed: { kind: 'parametric', theta: THETA },
  work: { kind: 'steps', steps },
});

describe('fixed work: the threshold comes from the loss curve alone', () => {
  it('every fixed-work job gets the same rule, whatever its work', () => {
    const rules = [600, 4000, 25_000].map((s) => ruleOf(fixed('j', s)));
    expect(new Set(rules.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(rules[0]?.stopsJob).toBe(false);
  });

  it.each([6, 40, 250])('the loss curve of %i epochs of work converges there under that rule', (epochs) => {
    const truth = resolveWork({ kind: 'epochs', epochs }, 100);
    expect(truth.convergence.threshold).toBe(ruleOf(fixed('j', 100)).threshold);
    expect(Math.abs(convergenceEpoch(truth.convergence, 10_000) - epochs)).toBeLessThanOrEqual(1);
  });

  const seen = async (estimation: Estimation): Promise<JobSnapshot[]> => {
    const out: JobSnapshot[] = [];
    const drf = getPolicy('drf');
    await simulate({
      trace: {
        format: 'optimus-trace',
        version: 1,
        name: 'fixed',
        seed: 1,
        cluster: { servers: [{ name: 's1', capacity: { cpu: 16, memory: 64 * GiB } }] },
        jobs: [fixed('a', 4000)],
      },
      measured: new Map(),
      policy: { ...drf, decide: (i: PolicyInput) => (out.push(...i.jobs), drf.decide(i)) },
      estimation,
      models: productionModels,
      seed: 1,
      intervalSec: 60,
    });
    return out;
  };

  it('online, the remaining work is an estimate; with declared epochs it is the truth', async () => {
    const online = await seen({ kind: 'online' });
    const declared = await seen({ kind: 'online', declaredEpochs: true });
    expect(online.some((j) => j.remaining.upper > j.remaining.lower)).toBe(true);
    expect(declared.length).toBeGreaterThan(1);
    expect(declared[0]?.remaining.steps).toBe(4000);
    for (const j of declared) expect(j.remaining.lower).toBe(j.remaining.upper);
  });
});
