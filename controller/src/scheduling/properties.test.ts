/**
 * Properties every registered policy must keep, on random heterogeneous snapshots:
 * no server over-committed, every placed job complete and within its bounds, GPU tasks only
 * where GPUs are, and the same decision for the same input (also when jobs come in another
 * order). A second round feeds the first decision back as the current state, to exercise the
 * keep-in-place and straggler paths.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU, RESOURCE_GPU as GPU, RESOURCE_MEMORY as MEM } from '../../../shared/src/units';
import { policyNames, getPolicy } from './registry';
import { eq3, eq4 } from './testing/builders';
import type { Decision, JobSnapshot, PolicyInput, ServerSnapshot } from './types';

const serverArb = fc.record({
  cpu: fc.integer({ min: 1, max: 16 }),
  mem: fc.integer({ min: 1, max: 64 }),
  gpus: fc.constantFrom(0, 0, 2, 4),
  reservedCpu: fc.constantFrom(0, 0, 1),
});

const jobArb = fc.record({
  gpu: fc.boolean(),
  sync: fc.boolean(),
  psCpu: fc.constantFrom(0.5, 1, 2),
  workerCpu: fc.constantFrom(0.5, 1, 2, 3),
  mem: fc.integer({ min: 1, max: 8 }),
  minPs: fc.integer({ min: 0, max: 2 }),
  extraPs: fc.integer({ min: 0, max: 4 }),
  minWorkers: fc.integer({ min: 0, max: 2 }),
  extraWorkers: fc.integer({ min: 0, max: 8 }),
  steps: fc.integer({ min: 0, max: 100_000 }),
  arrival: fc.integer({ min: 0, max: 100 }),
  theta: fc.array(fc.double({ min: 0.01, max: 5, noNaN: true }), { minLength: 5, maxLength: 5 }),
  stepTimes: fc.array(fc.double({ min: 0.1, max: 5, noNaN: true }), { maxLength: 6 }),
});

const inputArb = fc
  .record({
    servers: fc.array(serverArb, { minLength: 1, maxLength: 6 }),
    jobs: fc.array(jobArb, { maxLength: 8 }),
    restart: fc.constantFrom(0, 60),
  })
  .map(({ servers, jobs, restart }): PolicyInput => ({
    now: 0,
    restartCostSec: restart,
    servers: servers.map((s, i): ServerSnapshot => ({
      name: `s${i}`,
      capacity: { [CPU]: s.cpu, [MEM]: s.mem, ...(s.gpus > 0 ? { [GPU]: s.gpus } : {}) },
      reserved: { [CPU]: s.reservedCpu },
    })),
    jobs: jobs.map((j, i): JobSnapshot => ({
      id: `j${i}`,
      mode: j.sync ? 'sync' : 'async',
      psDemand: { [CPU]: j.psCpu, [MEM]: 1 },
      workerDemand: { [CPU]: j.workerCpu, [MEM]: j.mem, ...(j.gpu ? { [GPU]: 1 } : {}) },
      minPs: j.minPs,
      maxPs: Math.max(1, j.minPs) + j.extraPs,
      minWorkers: j.minWorkers,
      maxWorkers: Math.max(1, j.minWorkers) + j.extraWorkers,
      arrivalTime: j.arrival,
      current: null,
      remaining: { steps: j.steps, lower: j.steps, upper: j.steps },
      speed: j.sync ? eq4({ theta: j.theta, batch: 32 }) : eq3(j.theta),
      workerStepTimes: Object.fromEntries(j.stepTimes.map((t, k) => [k, t])),
    })),
  }));

/** The first decision becomes the current state of the next round. */
function nextRound(input: PolicyInput, decision: Decision): PolicyInput {
  const byId = new Map(decision.jobs.map((d) => [d.jobId, d]));
  return {
    ...input,
    jobs: input.jobs.map((j) => {
      const d = byId.get(j.id);
      return d?.action === 'run' ? { ...j, current: { shape: d.shape, placement: d.placement } } : j;
    }),
  };
}

function checkDecision(input: PolicyInput, decision: Decision): void {
  const servers = new Map(input.servers.map((s) => [s.name, s]));
  const used = new Map<string, Record<string, number>>();
  expect(decision.jobs.map((d) => d.jobId)).toEqual(input.jobs.map((j) => j.id));
  for (const d of decision.jobs) {
    if (d.action !== 'run') continue;
    const job = input.jobs.find((j) => j.id === d.jobId);
    if (!job) throw new Error(`decision for unknown job ${d.jobId}`);
    expect(d.shape.ps).toBeGreaterThanOrEqual(Math.max(1, job.minPs));
    expect(d.shape.ps).toBeLessThanOrEqual(job.maxPs);
    expect(d.shape.workers).toBeGreaterThanOrEqual(Math.max(1, job.minWorkers));
    expect(d.shape.workers).toBeLessThanOrEqual(job.maxWorkers);
    const keys = d.placement.map((t) => `${t.role}:${t.index}`).sort();
    const expected = [
      ...Array.from({ length: d.shape.ps }, (_, i) => `ps:${i}`),
      ...Array.from({ length: d.shape.workers }, (_, i) => `worker:${i}`),
    ].sort();
    expect(keys).toEqual(expected);
    for (const w of d.replaceWorkers) expect(w).toBeLessThan(d.shape.workers);
    for (const t of d.placement) {
      expect(servers.has(t.server)).toBe(true);
      const demand = t.role === 'ps' ? job.psDemand : job.workerDemand;
      const u = used.get(t.server) ?? {};
      for (const [r, v] of Object.entries(demand)) u[r] = (u[r] ?? 0) + v;
      used.set(t.server, u);
    }
  }
  for (const [name, u] of used) {
    const s = servers.get(name);
    for (const [r, v] of Object.entries(u)) {
      const room = (s?.capacity[r] ?? 0) - (s?.reserved[r] ?? 0);
      expect(v, `${name} ${r}`).toBeLessThanOrEqual(room + 1e-6);
    }
  }
}

describe.each(policyNames())('policy %s: properties', (name) => {
  it('never over-commits a server; every placed job is complete and within bounds (two rounds)', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const policy = getPolicy(name);
        const first = policy.decide(input);
        checkDecision(input, first);
        const second = nextRound(input, first);
        checkDecision(second, policy.decide(second));
      }),
      { numRuns: 60, seed: 42 },
    );
  });

  it('is deterministic: same input, same decision; job order does not matter', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const policy = getPolicy(name);
        const a = policy.decide(input);
        expect(getPolicy(name).decide(input)).toEqual(a);
        const reversed = policy.decide({ ...input, jobs: [...input.jobs].reverse() });
        const sort = (d: Decision) => [...d.jobs].sort((x, y) => (x.jobId < y.jobId ? -1 : 1));
        expect(sort(reversed)).toEqual(sort(a));
      }),
      { numRuns: 40, seed: 7 },
    );
  });
});
