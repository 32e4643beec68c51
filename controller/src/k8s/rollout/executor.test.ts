import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import { KubernetesExecutor } from './executor';
import { DEFAULT_TIMINGS } from './executor-factory';
import type { JobApi } from '../api/job-api';
import type { JobPods } from './job-pods';
import type { OptimusJob } from '../api/optimus-job';
import type { Rollouts } from './rollout';
import { replicaSpecs } from '../testing';

const spec = {
  mode: 'sync',
  replicaSpecs: replicaSpecs({ cpu: '1' }, { cpu: '1' }, 'mxnet'),
  batchSize: 32,
  convergence: { threshold: 0.02, patience: 2, stepsPerEpoch: 100 },
  scaling: { minPs: 1, maxPs: 2, minWorkers: 1, maxWorkers: 2 },
};
const placement: TaskPlacement[] = [
  { role: 'ps', index: 0, server: 'n1' },
  { role: 'worker', index: 0, server: 'n1' },
];
const job: OptimusJob = {
  metadata: { name: 'j', namespace: 'default', uid: 'u1' },
  spec,
  status: { phase: 'Running', shape: { ps: 1, workers: 1 }, placement },
};

/** Executor over stubs: the first pod create is refused (e.g. 409 AlreadyExists). */
function build() {
  const calls: string[] = [];
  let creates = 0;
  const running = (role: 'ps' | 'worker'): V1Pod => ({
    metadata: { name: `j-${role}-0`, labels: { 'optimus.dev/role': role, 'optimus.dev/index': '0' } },
    spec: { nodeName: 'n1', containers: [] },
    status: { phase: 'Running' },
  });
  const pods = {
    list: () => [running('ps'), running('worker')],
    delete: async (_ns: string, names: readonly string[]) => void calls.push(`delete ${names.join()}`),
    waitGone: async () => true,
    create: async (ps: readonly V1Pod[]) => {
      creates += 1;
      const node = JSON.stringify(ps[0]?.spec?.affinity).includes('"n2"') ? 'n2' : 'n1';
      calls.push(`create on ${node}`);
      if (creates === 1) throw new Error('pods "j-worker-0" already exists');
    },
    waitRunning: async () => ({ ok: true }) as const,
  } as unknown as JobPods;
  const rollouts = {
    running: async (_j: OptimusJob, _s: JobShape, p: readonly TaskPlacement[]) => {
      calls.push(`running ${p.map((x) => x.server).join()}`);
      return job;
    },
    stopAll: async () => void calls.push('stopAll'),
    suspended: async () => void calls.push('suspended'),
  } as unknown as Rollouts;
  const jobs = { get: async () => job } as unknown as JobApi;
  const executor = new KubernetesExecutor({ jobs, pods, rollouts, timings: DEFAULT_TIMINGS, now: () => 0 });
  return { executor, calls };
}

describe('KubernetesExecutor: replacing a straggler', () => {
  it('treats a refused create like a failed start: falls back to the old node, never a worker short', async () => {
    const { executor, calls } = build();
    const r = await executor.execute({
      actions: [{ kind: 'replace-worker', jobId: 'default/j', index: 0, server: 'n2' }],
    });
    expect(r.failed[0]?.error).toMatch(/already exists.*kept it on n1/);
    expect(calls).toEqual([
      'delete j-worker-0',
      'create on n2',
      'delete j-worker-0',
      'create on n1',
      'running n1,n1',
    ]);
  });
});
