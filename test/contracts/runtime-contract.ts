/**
 * The runtime contract: the shipped controller over every backend (simulator, local processes,
 * Kubernetes test double), with failures injected the backend's own way — a start whose tasks
 * never run, a resize whose new set fails (and, where the backend rolls back, whose rollback fails
 * too), a rollout that never confirms. After each, within one round the job runs again or is
 * reported with a reason — never stuck — and a hung rollout never stalls another job's round.
 *
 * A backend's test calls `describeRuntimeContract('local', makeHarness)`.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../controller/src/runtime/backend';
import { scaledClock } from '../../controller/src/runtime/clock';
import { Controller } from '../../controller/src/runtime/controller';
import { coreOf } from '../../controller/src/runtime/default-core';
import { jobSpecSchema, type JobSpec } from '../../controller/src/runtime/job-spec';
import { MemoryPublisher, MemoryStore } from '../../controller/src/runtime/testing';
import type { Decision, JobShape, PolicyInput } from '../../controller/src/scheduling/types';

/** A fault the harness injects into its backend for one job. */
export type Fault = 'fail' | 'hang';

export interface RuntimeHarness {
  readonly backend: Backend;
  /** Makes the job's next starts fail (or never confirm) the backend's own way; null clears it. */
  inject(jobId: string, fault: Fault | null): void;
  /** Makes the backend converge (a kubelet double runs pods, processes spawn...). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const GiB = 1024 ** 3;
/** Every job of the contract: small tasks, so any shape below fits the contract's servers. */
export const runtimeContractJob = (name: string): JobSpec =>
  jobSpecSchema.parse({
    name,
    batchSize: 64,
    stepsPerEpoch: 100,
    psDemand: { cpu: 1, memory: 1 * GiB },
    workerDemand: { cpu: 1, memory: 1 * GiB },
    maxPs: 4,
    maxWorkers: 4,
  });

/** A policy without pre-runs that runs every job at `shape.value`, all tasks on node-a. */
function fixedPolicy(shape: { value: JobShape }) {
  return {
    name: 'contract',
    description: 'every job at one shape on node-a',
    needsSpeedModel: false,
    decide: (input: PolicyInput): Decision => ({
      jobs: input.jobs.map((j) => ({
        jobId: j.id,
        action: 'run' as const,
        shape: shape.value,
        placement: [
          ...Array.from({ length: shape.value.ps }, (_, index) => ({
            role: 'ps' as const,
            index,
            server: 'node-a',
          })),
          ...Array.from({ length: shape.value.workers }, (_, index) => ({
            role: 'worker' as const,
            index,
            server: 'node-a',
          })),
        ],
        replaceWorkers: [],
      })),
    }),
  };
}

/** Wall ms the contract's controller waits for a rollout before it gives up (a hung one). */
const ROLLOUT_TIMEOUT_MS = 3000;
/** A rollout failure is retried after this backoff at the latest (see the controller). */
const RETRY_MS = 1100;

export function describeRuntimeContract(backend: string, makeHarness: () => Promise<RuntimeHarness>): void {
  describe(`runtime contract: ${backend}`, () => {
    const open: { h: RuntimeHarness; c: Controller }[] = [];
    afterEach(async () => {
      for (const { h, c } of open.splice(0)) {
        await c.stop();
        await h.close();
      }
    });

    async function start(shape: { value: JobShape }): Promise<{ h: RuntimeHarness; c: Controller }> {
      const h = await makeHarness();
      const c = new Controller({
        core: coreOf(fixedPolicy(shape)),
        backend: h.backend,
        store: new MemoryStore(),
        publisher: new MemoryPublisher(),
        clock: (origin) => scaledClock({ scale: 1, originMs: origin ?? Date.now() }),
        log: pino({ level: 'silent' }),
        id: `contract-${backend}`,
        schedulingIntervalSec: 3600,
        restartCostSec: 0,
        rolloutTimeoutSec: ROLLOUT_TIMEOUT_MS / 1000,
      });
      await c.start();
      open.push({ h, c });
      return { h, c };
    }

    /** One full round, and what it dispatched carried out (or given up). */
    async function round(x: { h: RuntimeHarness; c: Controller }): Promise<void> {
      await x.c.roundNow('full');
      await x.c.settled();
      await x.h.settle();
    }

    const view = (c: Controller, id: string) =>
      c.get(id) as {
        phase: string;
        shape: JobShape | null;
        degraded: { stage: string; reason: string } | null;
      };

    /** The contract's promise: the job runs at `shape`, or it is reported with a reason. */
    function runsOrSaysWhy(c: Controller, id: string, shape: JobShape): void {
      const v = view(c, id);
      if (v.shape && v.shape.ps === shape.ps && v.shape.workers === shape.workers) return;
      expect(v.degraded?.reason ?? '').not.toBe('');
    }

    it('a failed start is reported with a reason, and the job runs once the fault is gone', async () => {
      const shape = { value: { ps: 1, workers: 1 } };
      const x = await start(shape);
      const job = runtimeContractJob('failed-start');
      const id = `${job.namespace}/${job.name}`;
      x.h.inject(id, 'fail');
      await x.c.submit(job);
      await round(x);
      expect(view(x.c, id).degraded).toMatchObject({ stage: 'rollout', reason: expect.any(String) });
      await round(x); // within its backoff: observed as holding nothing, still with its reason
      expect(view(x.c, id)).toMatchObject({ shape: null, degraded: { stage: 'rollout' } });
      x.h.inject(id, null);
      await new Promise((r) => setTimeout(r, RETRY_MS));
      await round(x);
      await round(x);
      expect(view(x.c, id).shape).toEqual(shape.value);
    });

    it('a resize whose new set fails (and whose rollback may fail too) is never left stuck', async () => {
      const shape = { value: { ps: 1, workers: 1 } };
      const x = await start(shape);
      const job = runtimeContractJob('failed-resize');
      const id = `${job.namespace}/${job.name}`;
      await x.c.submit(job);
      await round(x);
      await round(x);
      expect(view(x.c, id).shape).toEqual({ ps: 1, workers: 1 });
      x.h.inject(id, 'fail'); // every start fails: the new set, and the old one if it rolls back
      shape.value = { ps: 2, workers: 2 };
      await round(x);
      runsOrSaysWhy(x.c, id, shape.value);
      expect(view(x.c, id).degraded).toMatchObject({ stage: 'rollout' });
      // Level-triggered: the next round plans from what is observed, whatever the failure left.
      x.h.inject(id, null);
      await new Promise((r) => setTimeout(r, RETRY_MS));
      await round(x);
      await round(x);
      expect(view(x.c, id)).toMatchObject({ shape: { ps: 2, workers: 2 }, degraded: null });
    });

    it('a rollout that never confirms is given up with a reason; another job runs meanwhile', async () => {
      const shape = { value: { ps: 1, workers: 1 } };
      const x = await start(shape);
      const slow = runtimeContractJob('never-confirms');
      const fast = runtimeContractJob('meanwhile');
      const slowId = `${slow.namespace}/${slow.name}`;
      const fastId = `${fast.namespace}/${fast.name}`;
      x.h.inject(slowId, 'hang');
      await x.c.submit(slow);
      await x.c.roundNow('full'); // the slow job's rollout is dispatched and hangs
      await x.c.submit(fast);
      await x.c.roundNow('full'); // a round completes while it hangs
      await x.h.settle();
      const until = Date.now() + ROLLOUT_TIMEOUT_MS / 2;
      while (Date.now() < until && view(x.c, fastId).shape === null)
        await new Promise((r) => setTimeout(r, 50));
      expect(view(x.c, fastId).shape).toEqual(shape.value);
      await x.c.settled(); // the slow rollout is given up after the timeout
      expect(view(x.c, slowId).degraded).toMatchObject({ stage: 'rollout' });
      expect(view(x.c, slowId).degraded?.reason).toMatch(/timed out|did not|never/);
      x.h.inject(slowId, null);
      await new Promise((r) => setTimeout(r, RETRY_MS));
      await round(x);
      await round(x);
      expect(view(x.c, slowId).shape).toEqual(shape.value);
    });
  });
}
