/**
 * The executor contract (ADR 0035): one suite, run against every backend's executor (simulator,
 * local processes, Kubernetes test double) so they cannot drift apart. The suite plays the runtime's
 * part — observe, take the next step (`nextStep`, the one function every backend shares), let the
 * backend move — until the target is reached, and checks what then runs: every task of the target,
 * at its generation, and nothing else.
 *
 * A backend's test calls `describeExecutorContract('local', makeHarness)`; the harness wraps a fresh
 * backend with the three servers of {@link CONTRACT_SERVERS}.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor, Observation, StepOutcome } from '../../controller/src/runtime/backend';
import { jobSpecSchema, type JobSpec } from '../../controller/src/runtime/job-spec';
import { nextStep } from '../../controller/src/runtime/rollout/next-step';
import type { JobTarget, TargetTask } from '../../controller/src/runtime/rollout/target';
import type { TaskPlacement } from '../../controller/src/scheduling/types';

export interface ExecutorHarness {
  readonly executor: Executor;
  observe(): Promise<Observation>;
  /** Make the job known to the backend, as a user's submission would. Nothing runs yet. */
  submit(job: JobSpec): Promise<void>;
  /** Let the backend move (a kubelet double runs pods, processes spawn, virtual time passes...). */
  settle(): Promise<void>;
  /**
   * Optional: the controller restarts — the executor is built anew over the same cluster, with
   * nothing remembered (Kubernetes, the simulator). Absent where the cluster does not outlive the
   * controller (local mode's processes stop with it; real-process tests cover that).
   */
  restartController?(): Promise<void>;
  /**
   * True where a step still runs as a whole plan action (Kubernetes, `k8s/rollout/plan-steps.ts`):
   * a resize's stop step then starts the new set too, so no separate start step follows.
   */
  readonly stepsAsPlans?: true;
  close(): Promise<void>;
}

const GiB = 1024 ** 3;
/** Every harness is built on exactly these servers. */
export const CONTRACT_SERVERS = [
  { name: 'node-a', capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 2 } },
  { name: 'node-b', capacity: { cpu: 16, memory: 64 * GiB, 'nvidia.com/gpu': 2 } },
  { name: 'node-c', capacity: { cpu: 16, memory: 64 * GiB } },
] as const;

export const contractJob = (name: string): JobSpec =>
  jobSpecSchema.parse({
    name,
    batchSize: 64,
    stepsPerEpoch: 100,
    psDemand: { cpu: 1, memory: 2 * GiB },
    workerDemand: { cpu: 1, memory: 2 * GiB },
    maxPs: 4,
    maxWorkers: 4,
  });

const tasksOf = (generation: number, ps: string[], workers: string[]): TargetTask[] => [
  ...ps.map((server, index) => ({ role: 'ps' as const, index, server, generation })),
  ...workers.map((server, index) => ({ role: 'worker' as const, index, server, generation })),
];

export const targetOf = (
  generation: number,
  tasks: readonly TargetTask[],
  o: Partial<JobTarget> = {},
): JobTarget => ({
  generation,
  tasks,
  checkpoint: true,
  restart: false,
  fitted: false,
  sinceMs: 0,
  deadlineMs: Number.MAX_SAFE_INTEGER,
  ...o,
});

const key = (t: TaskPlacement & { generation?: number }) =>
  `${t.role}/${t.index}@${t.server}#${t.generation}`;

/**
 * Plays the runtime: steps `target` until it is reached (or a step fails), at most `max` times.
 * `before` runs before each step (a crash of the controller, say). Returns the outcomes.
 */
export async function stepUntilReached(
  x: ExecutorHarness,
  spec: JobSpec,
  target: JobTarget,
  o: { max?: number; before?: (n: number) => Promise<void> } = {},
): Promise<StepOutcome[]> {
  const id = `${spec.namespace}/${spec.name}`;
  const outcomes: StepOutcome[] = [];
  for (let n = 0; n < (o.max ?? 60); n++) {
    const observed = (await x.observe()).jobs.get(id);
    const next = nextStep(target, observed);
    if (next.kind === 'reached') return outcomes;
    if (next.kind === 'failed') throw new Error(`the target cannot be reached: ${next.reason}`);
    if (next.kind !== 'wait') {
      await o.before?.(n);
      const r = await x.executor.step({ jobId: id, spec, target, observed, step: next });
      outcomes.push(r);
      if (r.kind === 'failed') return outcomes;
    }
    await x.settle();
  }
  throw new Error(`${id} did not reach generation ${target.generation} in ${o.max ?? 60} looks`);
}

/** What runs of the job: each task with its server and generation, sorted. */
async function running(x: ExecutorHarness, id: string): Promise<string[]> {
  const job = (await x.observe()).jobs.get(id);
  return (job?.tasks ?? [])
    .filter((t) => t.state === 'running')
    .map(key)
    .sort();
}

const keys = (tasks: readonly TargetTask[]) => tasks.map(key).sort();

export function describeExecutorContract(backend: string, makeHarness: () => Promise<ExecutorHarness>): void {
  describe(`executor contract: ${backend}`, () => {
    let h: ExecutorHarness | undefined;
    const harness = async (): Promise<ExecutorHarness> => (h = await makeHarness());
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it('starts a job: every task of the target on its server, at the target’s generation', async () => {
      const x = await harness();
      const job = contractJob('start');
      await x.submit(job);
      const t = targetOf(1, tasksOf(1, ['node-a'], ['node-a', 'node-b']));
      const outcomes = await stepUntilReached(x, job, t);
      expect(outcomes.every((r) => r.kind === 'done')).toBe(true);
      expect(await running(x, 'default/start')).toEqual(keys(t.tasks));
    });

    it('resizes by checkpoint → restart: the old set goes first, the new one runs at the new generation', async () => {
      const x = await harness();
      const job = contractJob('resize');
      await x.submit(job);
      await stepUntilReached(x, job, targetOf(1, tasksOf(1, ['node-a'], ['node-a'])));
      const t = targetOf(2, tasksOf(2, ['node-a', 'node-b'], ['node-a', 'node-a', 'node-b', 'node-b']), {
        restart: true,
      });
      const kinds: string[] = [];
      await stepUntilReached(x, job, t, {
        before: async () => {
          const observed = (await x.observe()).jobs.get('default/resize');
          kinds.push(nextStep(t, observed).kind);
        },
      });
      expect(kinds[0]).toBe('stop');
      if (!x.stepsAsPlans) expect(kinds.at(-1)).toBe('start');
      expect(await running(x, 'default/resize')).toEqual(keys(t.tasks));
    });

    it('suspends a job: nothing of it runs or holds anything afterwards', async () => {
      const x = await harness();
      const job = contractJob('suspend');
      await x.submit(job);
      await stepUntilReached(x, job, targetOf(1, tasksOf(1, ['node-b'], ['node-b'])));
      await stepUntilReached(x, job, targetOf(2, [], { reason: 'does not fit' }));
      expect((await x.observe()).jobs.get('default/suspend')?.tasks ?? []).toEqual([]);
    });

    it('replaces one straggling worker; the other tasks keep running at their generation', async () => {
      const x = await harness();
      const job = contractJob('straggler');
      await x.submit(job);
      const first = tasksOf(1, ['node-a'], ['node-a', 'node-b']);
      await stepUntilReached(x, job, targetOf(1, first));
      const moved = first.map((p) =>
        p.role === 'worker' && p.index === 1 ? { ...p, server: 'node-c', generation: 2 } : p,
      );
      await stepUntilReached(x, job, targetOf(2, moved));
      expect(await running(x, 'default/straggler')).toEqual(keys(moved));
    });

    it('records a job’s end before its tasks go, and holds nothing afterwards', async () => {
      const x = await harness();
      const job = contractJob('over');
      await x.submit(job);
      await stepUntilReached(x, job, targetOf(1, tasksOf(1, ['node-a'], ['node-a'])));
      const end = { outcome: 'succeeded' as const, reason: 'Converged', message: 'm' };
      const t = targetOf(2, [], { end });
      const kinds: string[] = [];
      await stepUntilReached(x, job, t, {
        before: async () => {
          kinds.push(nextStep(t, (await x.observe()).jobs.get('default/over')).kind);
        },
      });
      expect(kinds[0]).toBe('record-end');
      // Kept as finished with nothing left (or, in the simulator, no longer observed at all).
      const observed = (await x.observe()).jobs.get('default/over');
      if (observed) expect(observed.finished).toMatchObject({ outcome: 'succeeded', reason: 'Converged' });
      expect(observed?.tasks ?? []).toEqual([]);
    });

    it('a step is idempotent: the same start twice runs one set, not two', async () => {
      const x = await harness();
      const job = contractJob('twice');
      await x.submit(job);
      const t = targetOf(1, tasksOf(1, ['node-c'], ['node-c']));
      const observed = (await x.observe()).jobs.get('default/twice');
      const step = nextStep(t, observed);
      expect(step.kind).toBe('start');
      if (step.kind !== 'start') return;
      await x.executor.step({ jobId: 'default/twice', spec: job, target: t, observed, step });
      await x.executor.step({ jobId: 'default/twice', spec: job, target: t, observed, step });
      await stepUntilReached(x, job, t);
      const tasks = (await x.observe()).jobs.get('default/twice')?.tasks ?? [];
      expect(tasks.map(key).sort()).toEqual(keys(t.tasks));
    });

    it('a step on an unknown job fails as an outcome; other jobs step on', async () => {
      const x = await harness();
      const job = contractJob('rest');
      await x.submit(job);
      const ghost = contractJob('no-such-job');
      const t = targetOf(1, tasksOf(1, ['node-a'], ['node-a']));
      const r = await x.executor.step({
        jobId: 'default/no-such-job',
        spec: ghost,
        target: t,
        observed: undefined,
        step: { kind: 'start', tasks: t.tasks },
      });
      expect(r.kind).toBe('failed');
      await stepUntilReached(x, job, t);
      expect(await running(x, 'default/rest')).toEqual(keys(t.tasks));
    });

    it('a controller that restarts between any two steps still reaches the target, with nothing doubled', async () => {
      const x = await harness();
      if (!x.restartController) return; // the cluster does not outlive the controller here
      const job = contractJob('crash');
      await x.submit(job);
      await stepUntilReached(x, job, targetOf(1, tasksOf(1, ['node-a'], ['node-a'])));
      const t = targetOf(2, tasksOf(2, ['node-b'], ['node-b', 'node-c']), { restart: true });
      await stepUntilReached(x, job, t, { before: async () => x.restartController?.() });
      const tasks = (await x.observe()).jobs.get('default/crash')?.tasks ?? [];
      expect(tasks.map(key).sort()).toEqual(keys(t.tasks));
    });
  });
}
