import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { finishedOf, terminalStatus } from './completion';
import { observeJobs, serverOf, taskStateOf } from './observe';
import type { OptimusJob, OptimusJobStatus } from '../api/optimus-job';
import { minimalJobSpec } from '../testing';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const timings = { unschedulableGraceMs: 30_000, startTimeoutMs: 300_000 };

/** A pod of job `j` (uid `u1` unless `owner` says otherwise), built field by field. */
function pod(o: {
  role?: string;
  index?: number;
  phase?: string;
  node?: string;
  pinned?: string;
  deleting?: boolean;
  waiting?: string;
  unschedulableSince?: number;
  createdAt?: number;
  owner?: string;
  reason?: string;
}): V1Pod {
  return {
    metadata: {
      name: `j-${o.role ?? 'worker'}-${o.index ?? 0}`,
      namespace: 'default',
      labels: {
        'optimus.dev/job': 'j',
        'optimus.dev/role': o.role ?? 'worker',
        'optimus.dev/index': `${o.index ?? 0}`,
      },
      ownerReferences: [
        {
          apiVersion: 'optimus.dev/v1alpha1',
          kind: 'OptimusJob',
          name: 'j',
          uid: o.owner ?? 'u1',
          controller: true,
        },
      ],
      creationTimestamp: new Date(o.createdAt ?? T0),
      ...(o.deleting ? { deletionTimestamp: new Date(T0) } : {}),
    },
    spec: {
      containers: [{ name: 'main', image: 'i' }],
      ...(o.node ? { nodeName: o.node } : {}),
      ...(o.pinned
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    { matchFields: [{ key: 'metadata.name', operator: 'In', values: [o.pinned] }] },
                  ],
                },
              },
            },
          }
        : {}),
    },
    status: {
      ...(o.phase ? { phase: o.phase } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
      ...(o.waiting
        ? {
            containerStatuses: [
              {
                name: 'main',
                image: 'i',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: { waiting: { reason: o.waiting } },
              },
            ],
          }
        : {}),
      ...(o.unschedulableSince !== undefined
        ? {
            conditions: [
              {
                type: 'PodScheduled',
                status: 'False',
                reason: 'Unschedulable',
                lastTransitionTime: new Date(o.unschedulableSince),
              },
            ],
          }
        : {}),
    },
  };
}

const job = (status: OptimusJobStatus = {}, uid = 'u1'): OptimusJob => ({
  metadata: { name: 'j', namespace: 'default', uid, creationTimestamp: iso(T0 - 60_000) },
  spec: minimalJobSpec,
  status,
});

describe('taskStateOf: a pod as a task state', () => {
  it.each([
    { name: 'new, unbound', p: pod({}), now: T0, state: 'pending' },
    { name: 'running', p: pod({ phase: 'Running', node: 'n1' }), now: T0, state: 'running' },
    { name: 'terminating', p: pod({ phase: 'Running', deleting: true }), now: T0, state: 'stopping' },
    { name: 'exited 0', p: pod({ phase: 'Succeeded' }), now: T0, state: 'succeeded' },
    { name: 'exited non-zero', p: pod({ phase: 'Failed' }), now: T0, state: 'failed' },
    {
      name: 'image cannot be pulled',
      p: pod({ phase: 'Pending', waiting: 'ImagePullBackOff' }),
      now: T0,
      state: 'failed',
    },
    {
      name: 'unschedulable within its grace',
      p: pod({ phase: 'Pending', unschedulableSince: T0 }),
      now: T0 + 29_000,
      state: 'pending',
    },
    {
      name: 'unschedulable past its grace',
      p: pod({ phase: 'Pending', unschedulableSince: T0 }),
      now: T0 + 30_000,
      state: 'failed',
    },
    {
      name: 'never started by its kubelet',
      p: pod({ phase: 'Pending', node: 'n1' }),
      now: T0 + 300_000,
      state: 'failed',
    },
    { name: 'still starting', p: pod({ phase: 'Pending', node: 'n1' }), now: T0 + 299_000, state: 'pending' },
  ])('$name → $state', ({ p, now, state }) => expect(taskStateOf(p, now, timings)).toBe(state));

  it('an unbound pod counts on the node it is pinned to', () => {
    expect([
      serverOf(pod({ pinned: 'n2' })),
      serverOf(pod({ pinned: 'n2', node: 'n3' })),
      serverOf(pod({})),
    ]).toEqual(['n2', 'n3', '']);
  });
});

describe('observeJobs: OptimusJobs and pods → what runs', () => {
  const running = { phase: 'Running' as const };
  it.each([
    {
      name: 'a running set',
      status: running,
      pods: [
        pod({ role: 'scheduler', phase: 'Running' }),
        pod({ role: 'ps', phase: 'Running', node: 'n1' }),
        pod({ phase: 'Running', node: 'n2' }),
      ],
      want: {
        tasks: [
          { role: 'ps', index: 0, server: 'n1', state: 'running' },
          { role: 'worker', index: 0, server: 'n2', state: 'running' },
        ],
        exited: null,
        finished: null,
      },
    },
    {
      name: 'every worker exited 0',
      status: running,
      pods: [pod({ phase: 'Succeeded', node: 'n1' })],
      want: { exited: { outcome: 'succeeded', reason: 'WorkersSucceeded' }, finished: null },
    },
    {
      name: 'a worker failed',
      status: running,
      pods: [pod({ phase: 'Failed', node: 'n1' })],
      want: { exited: { outcome: 'failed', reason: 'WorkerFailed' } },
    },
    {
      name: 'a set that fails while this controller rolls it out (the rollout deletes it)',
      status: { phase: 'Resizing' as const },
      pods: [pod({ phase: 'Failed', node: 'n1' })],
      rollingOut: true,
      want: { exited: null, tasks: [{ role: 'worker', index: 0, server: 'n1', state: 'failed' }] },
    },
    {
      name: 'an exit under a status a dead controller left mid-rollout (the pods tell)',
      status: { phase: 'Resizing' as const },
      pods: [pod({ phase: 'Succeeded', node: 'n1' })],
      want: { exited: { outcome: 'succeeded', reason: 'WorkersSucceeded' } },
    },
    {
      name: 'an evicted worker (the cluster failed it, not the program)',
      status: running,
      pods: [pod({ phase: 'Failed', node: 'n1', reason: 'Evicted' })],
      want: { exited: null, tasks: [{ role: 'worker', index: 0, server: 'n1', state: 'failed' }] },
    },
    {
      name: 'a worker its kubelet refused (OutOfcpu)',
      status: running,
      pods: [pod({ phase: 'Failed', node: 'n1', reason: 'OutOfcpu' })],
      want: { exited: null },
    },
    {
      name: 'the pods of a deleted job of the same name',
      status: running,
      pods: [pod({ phase: 'Running', node: 'n1', owner: 'old-uid', deleting: true })],
      want: { tasks: [], exited: null },
    },
    {
      name: 'a finished job whose pods are left (a crash between status and deletes)',
      status: {
        phase: 'Succeeded' as const,
        conditions: [{ type: 'Complete', status: 'True' as const, reason: 'Converged', message: 'flat' }],
      },
      pods: [pod({ phase: 'Running', node: 'n1' })],
      want: {
        tasks: [{ role: 'worker', index: 0, server: 'n1', state: 'running' }],
        finished: { outcome: 'succeeded', reason: 'Converged', message: 'flat' },
      },
    },
  ])('$name', ({ status, pods, want, ...o }) => {
    const rollingOut = () => 'rollingOut' in o && o.rollingOut === true;
    expect(
      observeJobs([job(status)], pods, { ...timings, nowMs: T0, rollingOut }).get('default/j'),
    ).toMatchObject(want);
  });
});

describe('completion, recorded', () => {
  it('a terminal status reads back as the end it records', () => {
    const end = {
      outcome: 'failed' as const,
      reason: 'WorkerFailed',
      message: 'worker pod j-worker-0 failed',
    };
    const status = terminalStatus(job({ phase: 'Running' }), end, T0);
    expect(status).toMatchObject({ phase: 'Failed', completionTime: iso(T0), jctSeconds: 60 });
    expect(finishedOf(job(status as OptimusJobStatus))).toEqual(end);
    expect(finishedOf(job({ phase: 'Running' }))).toBeNull();
  });
});
