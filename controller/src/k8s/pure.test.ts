import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podRequests, serversFrom } from './observe/cluster-view';
import { setCondition } from './api/conditions';
import { verdictFrom } from './observe/completion';
import { parseSpec } from './api/optimus-job';
import { podState } from './rollout/pod-state';
import { parseQuantity } from './api/quantity';
import { minimalJobSpec, replicaSpecs } from './testing';

describe('parseQuantity', () => {
  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['4Gi', 4 * 2 ** 30],
    ['1.5G', 1.5e9],
    ['1e3', 1000],
    ['128Mi', 128 * 2 ** 20],
    [3, 3],
  ] as const)('%s → %d', (q, v) => expect(parseQuantity(q)).toBeCloseTo(v));
  it.each(['lots', '1Xi', ''])('rejects %j naming it', (q) =>
    expect(() => parseQuantity(q)).toThrow(`"${q}"`),
  );
});

const pod = (o: {
  phase?: string;
  waiting?: string;
  unschedulable?: boolean;
  deleting?: boolean;
}): V1Pod => ({
  metadata: { name: 'p', ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
  status: {
    ...(o.phase ? { phase: o.phase } : {}),
    ...(o.waiting
      ? {
          containerStatuses: [
            {
              name: 'm',
              image: 'i',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: o.waiting } },
            },
          ],
        }
      : {}),
    ...(o.unschedulable
      ? { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }
      : {}),
  },
});

describe('podState', () => {
  it.each([
    { name: 'new pod', p: pod({}), state: 'pending' },
    { name: 'running', p: pod({ phase: 'Running' }), state: 'running' },
    { name: 'image pull error', p: pod({ phase: 'Pending', waiting: 'ErrImagePull' }), state: 'image-error' },
    { name: 'back-off', p: pod({ phase: 'Pending', waiting: 'ImagePullBackOff' }), state: 'image-error' },
    {
      name: 'container creating',
      p: pod({ phase: 'Pending', waiting: 'ContainerCreating' }),
      state: 'pending',
    },
    { name: 'unschedulable', p: pod({ phase: 'Pending', unschedulable: true }), state: 'unschedulable' },
    { name: 'failed', p: pod({ phase: 'Failed' }), state: 'failed' },
    { name: 'terminating', p: pod({ phase: 'Running', deleting: true }), state: 'terminating' },
  ])('$name → $state', ({ p, state }) => expect(podState(p).state).toBe(state));
});

const GiB = 2 ** 30;
const node = (name: string, o: { cordoned?: boolean; notReady?: boolean } = {}): V1Node => ({
  metadata: { name },
  spec: o.cordoned ? { unschedulable: true } : {},
  status: {
    allocatable: { cpu: '8', memory: '32Gi' },
    conditions: [{ type: 'Ready', status: o.notReady ? 'False' : 'True' }],
  },
});
const onNode = (
  nodeName: string,
  cpu: string,
  o: { ours?: boolean; phase?: string; sidecar?: string } = {},
): V1Pod => ({
  metadata: {
    name: 'x',
    ...(o.ours
      ? { ownerReferences: [{ apiVersion: 'optimus.dev/v1alpha2', kind: 'OptimusJob', name: 'j', uid: 'u' }] }
      : {}),
  },
  spec: {
    nodeName,
    containers: [{ name: 'm', resources: { requests: { cpu } } }],
    ...(o.sidecar
      ? {
          initContainers: [
            { name: 's', restartPolicy: 'Always', resources: { requests: { cpu: o.sidecar } } },
          ],
        }
      : {}),
  },
  status: { phase: o.phase ?? 'Running' },
});

describe('cluster view', () => {
  it('reserves what pods that are not ours request, skipping finished pods and unusable nodes', () => {
    const servers = serversFrom(
      [node('b'), node('a'), node('cordoned', { cordoned: true }), node('down', { notReady: true })],
      [
        onNode('a', '1'),
        onNode('a', '500m', { sidecar: '10m' }),
        onNode('a', '4', { ours: true }),
        onNode('b', '2', { phase: 'Succeeded' }),
      ],
    );
    expect(servers).toEqual([
      { name: 'a', capacity: { cpu: 8, memory: 32 * GiB }, reserved: { cpu: 1.51 } },
      { name: 'b', capacity: { cpu: 8, memory: 32 * GiB }, reserved: {} },
    ]);
  });
  it('counts a plain init container only when it asks for more than the containers', () => {
    const p = onNode('a', '1');
    p.spec!.initContainers = [{ name: 'init', resources: { requests: { cpu: '3', memory: '1Gi' } } }];
    expect(podRequests(p)).toEqual({ cpu: 3, memory: GiB });
  });
});

describe('completion verdict', () => {
  const worker = (phase: string): V1Pod => ({
    metadata: { name: 'w', labels: { 'optimus.dev/role': 'worker' } },
    status: { phase },
  });
  it.each([
    { name: 'all workers succeeded', pods: [worker('Succeeded'), worker('Succeeded')], verdict: 'succeeded' },
    { name: 'one still running', pods: [worker('Succeeded'), worker('Running')], verdict: 'running' },
    { name: 'one failed', pods: [worker('Failed'), worker('Running')], verdict: 'failed' },
    { name: 'no pods', pods: [], verdict: 'running' },
  ])('$name → $verdict', ({ pods, verdict }) => expect(verdictFrom(pods).verdict).toBe(verdict));
});

describe('conditions', () => {
  it('keeps lastTransitionTime while the status does not flip', () => {
    const a = setCondition([], { type: 'Running', status: 'True', reason: 'x' }, 't1');
    const b = setCondition(a, { type: 'Running', status: 'True', reason: 'y' }, 't2');
    const c = setCondition(b, { type: 'Running', status: 'False', reason: 'z' }, 't3');
    expect([a[0]?.lastTransitionTime, b[0]?.lastTransitionTime, c[0]?.lastTransitionTime, c.length]).toEqual([
      't1',
      't1',
      't3',
      1,
    ]);
  });
});

describe('parseSpec (the controller re-checks what CEL checks)', () => {
  const spec = minimalJobSpec;
  it('accepts a valid spec', () => expect(parseSpec(spec).ok).toBe(true));
  it.each([
    {
      name: 'minPs > maxPs',
      patch: { scaling: { minPs: 5, maxPs: 4, minWorkers: 1, maxWorkers: 4 } },
      error: 'minPs must be <= scaling.maxPs',
    },
    {
      name: 'bad quantity',
      patch: { replicaSpecs: replicaSpecs({ cpu: '1' }, { cpu: 'lots' }) },
      error: 'spec.replicaSpecs.Worker.template.spec.containers.0.resources.requests.cpu',
    },
    { name: 'unknown mode', patch: { mode: 'sometimes' }, error: 'spec.mode' },
  ])('rejects $name, naming the field', ({ patch, error }) => {
    const r = parseSpec({ ...spec, ...patch });
    expect(r.ok ? '' : r.error).toContain(error);
  });
});
