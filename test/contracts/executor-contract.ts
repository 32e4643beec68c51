/**
 * The executor contract: one suite, run against every backend's executor (simulator,
 * local processes, Kubernetes test double) so they cannot drift apart.
 *
 * A backend's test calls `describeExecutorContract('local', makeHarness)`; the harness
 * wraps a fresh backend with the three servers of {@link CONTRACT_SERVERS}.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor, Plan } from '../../controller/src/planning/types';
import type { JobShape, TaskPlacement } from '../../controller/src/scheduling/types';
import type { Resources } from '../../shared/src/units';

export interface ContractJob {
  readonly id: string; // `namespace/name`
  readonly mode: 'sync' | 'async';
  readonly psDemand: Resources;
  readonly workerDemand: Resources;
}

export interface RunningJob {
  readonly shape: JobShape;
  readonly placement: readonly TaskPlacement[];
}

export interface ExecutorHarness {
  readonly executor: Executor;
  /** Make the job known to the backend, as a user's submission would. Nothing runs yet. */
  submit(job: ContractJob): Promise<void>;
  /** Let the backend converge (a kubelet double marks pods running, processes spawn...). */
  settle(): Promise<void>;
  /** What runs now for the job (shape and per-task server), or null when nothing does. */
  running(jobId: string): Promise<RunningJob | null>;
  /** How many checkpoint → restart cycles the backend carried out for the job. */
  restarts(jobId: string): Promise<number>;
  close(): Promise<void>;
}

const GiB = 1024 ** 3;
/** Every harness is built on exactly these servers. */
export const CONTRACT_SERVERS = [
  { name: 'node-a', capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 2 } },
  { name: 'node-b', capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 2 } },
  { name: 'node-c', capacity: { cpu: 16, memory: 64 * GiB } },
] as const;

export const contractJob = (name: string): ContractJob => ({
  id: `default/${name}`,
  mode: 'sync',
  psDemand: { cpu: 1, memory: 2 * GiB },
  workerDemand: { cpu: 1, memory: 2 * GiB },
});

const placementOf = (ps: string[], workers: string[]): TaskPlacement[] => [
  ...ps.map((server, index) => ({ role: 'ps' as const, index, server })),
  ...workers.map((server, index) => ({ role: 'worker' as const, index, server })),
];

const sortPlacement = (p: readonly TaskPlacement[]): TaskPlacement[] =>
  [...p].sort((a, b) => a.role.localeCompare(b.role) || a.index - b.index);

export function describeExecutorContract(backend: string, makeHarness: () => Promise<ExecutorHarness>): void {
  describe(`executor contract: ${backend}`, () => {
    let h: ExecutorHarness | undefined;
    const harness = async (): Promise<ExecutorHarness> => (h = await makeHarness());
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    const run = async (x: ExecutorHarness, plan: Plan) => {
      const result = await x.executor.execute(plan);
      await x.settle();
      return result;
    };

    it('starts a job with the decided shape on the decided servers', async () => {
      const x = await harness();
      const job = contractJob('start');
      await x.submit(job);
      const placement = placementOf(['node-a'], ['node-a', 'node-b']);
      const r = await run(x, {
        actions: [{ kind: 'start', jobId: job.id, shape: { ps: 1, workers: 2 }, placement }],
      });
      expect(r.failed).toEqual([]);
      expect(r.applied).toHaveLength(1);
      const now = await x.running(job.id);
      expect(now?.shape).toEqual({ ps: 1, workers: 2 });
      expect(sortPlacement(now?.placement ?? [])).toEqual(sortPlacement(placement));
      expect(await x.restarts(job.id)).toBe(0);
    });

    it('resizes by checkpoint → restart: new shape, one restart counted', async () => {
      const x = await harness();
      const job = contractJob('resize');
      await x.submit(job);
      await run(x, {
        actions: [
          {
            kind: 'start',
            jobId: job.id,
            shape: { ps: 1, workers: 1 },
            placement: placementOf(['node-a'], ['node-a']),
          },
        ],
      });
      const placement = placementOf(['node-a', 'node-b'], ['node-a', 'node-a', 'node-b', 'node-b']);
      const r = await run(x, {
        actions: [
          {
            kind: 'resize',
            jobId: job.id,
            from: { ps: 1, workers: 1 },
            shape: { ps: 2, workers: 4 },
            placement,
          },
        ],
      });
      expect(r.failed).toEqual([]);
      const now = await x.running(job.id);
      expect(now?.shape).toEqual({ ps: 2, workers: 4 });
      expect(sortPlacement(now?.placement ?? [])).toEqual(sortPlacement(placement));
      expect(await x.restarts(job.id)).toBe(1);
    });

    it('suspends a job: nothing of it runs afterwards', async () => {
      const x = await harness();
      const job = contractJob('suspend');
      await x.submit(job);
      await run(x, {
        actions: [
          {
            kind: 'start',
            jobId: job.id,
            shape: { ps: 1, workers: 1 },
            placement: placementOf(['node-b'], ['node-b']),
          },
        ],
      });
      const r = await run(x, { actions: [{ kind: 'suspend', jobId: job.id, reason: 'does not fit' }] });
      expect(r.failed).toEqual([]);
      expect(await x.running(job.id)).toBeNull();
    });

    it('replaces one straggling worker, keeping the shape and the other tasks', async () => {
      const x = await harness();
      const job = contractJob('straggler');
      await x.submit(job);
      await run(x, {
        actions: [
          {
            kind: 'start',
            jobId: job.id,
            shape: { ps: 1, workers: 2 },
            placement: placementOf(['node-a'], ['node-a', 'node-b']),
          },
        ],
      });
      const r = await run(x, {
        actions: [{ kind: 'replace-worker', jobId: job.id, index: 1, server: 'node-c' }],
      });
      expect(r.failed).toEqual([]);
      const now = await x.running(job.id);
      expect(now?.shape).toEqual({ ps: 1, workers: 2 });
      expect(sortPlacement(now?.placement ?? [])).toEqual(
        sortPlacement(placementOf(['node-a'], ['node-a', 'node-c'])),
      );
    });

    it('reports an action on an unknown job as failed and still applies the rest of the plan', async () => {
      const x = await harness();
      const job = contractJob('rest');
      await x.submit(job);
      const r = await run(x, {
        actions: [
          {
            kind: 'start',
            jobId: 'default/no-such-job',
            shape: { ps: 1, workers: 1 },
            placement: placementOf(['node-a'], ['node-a']),
          },
          {
            kind: 'start',
            jobId: job.id,
            shape: { ps: 1, workers: 1 },
            placement: placementOf(['node-c'], ['node-c']),
          },
        ],
      });
      expect(r.failed.map((f) => f.action.jobId)).toEqual(['default/no-such-job']);
      expect(r.applied.map((a) => a.jobId)).toEqual([job.id]);
      expect((await x.running(job.id))?.shape).toEqual({ ps: 1, workers: 1 });
    });

    it('an empty plan changes nothing', async () => {
      const x = await harness();
      const job = contractJob('idle');
      await x.submit(job);
      await run(x, {
        actions: [
          {
            kind: 'start',
            jobId: job.id,
            shape: { ps: 1, workers: 1 },
            placement: placementOf(['node-a'], ['node-b']),
          },
        ],
      });
      const r = await run(x, { actions: [] });
      expect(r).toEqual({ applied: [], failed: [] });
      expect((await x.running(job.id))?.shape).toEqual({ ps: 1, workers: 1 });
      expect(await x.restarts(job.id)).toBe(0);
    });
  });
}
