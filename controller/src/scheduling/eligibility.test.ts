/**
 * Node constraints (what pod templates say: nodeSelector, required node affinity, tolerations)
 * hold for every registered policy: no task is placed on a server its role does not admit, the
 * constrained jobs still run, and a cluster where nothing is constrained decides as before.
 */
import { describe, expect, it } from 'vitest';
import { RESOURCE_CPU as CPU, RESOURCE_GPU as GPU } from '../../../shared/src/units';
import { admitsAll } from './core/node-match';
import { getPolicy, policyNames } from './registry';
import { job, server, snapshot } from './testing/builders';
import type { JobDecision, NodeConstraint, PolicyInput, RoleConstraints } from './types';

const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
const TOLERATE_GPU: NodeConstraint = { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] };
/** A pod template with no scheduling constraint still keeps off tainted nodes. */
const PLAIN: NodeConstraint = {};

function cluster() {
  return [
    server('a1').cpu(16).labels({ pool: 'a' }),
    server('a2').cpu(16).labels({ pool: 'a' }),
    server('b1').cpu(32).labels({ pool: 'b' }),
    server('g1').cpu(16).gpus(4).labels({ accelerator: 'v100' }).taint(GPU_TAINT),
    server('g2').cpu(16).gpus(4).labels({ accelerator: 'v100' }).taint(GPU_TAINT),
  ];
}

const gpuJob: RoleConstraints = { ps: [PLAIN, { nodeSelector: { pool: 'a' } }], worker: [TOLERATE_GPU] };
const poolB: RoleConstraints = {
  ps: [{ terms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }] }] }],
  worker: [PLAIN],
};

function input(): PolicyInput {
  return snapshot()
    .servers(...cluster())
    .jobs(
      job('gpu')
        .ps({ [CPU]: 2 })
        .worker({ [CPU]: 2, [GPU]: 1 })
        .bounds({ maxPs: 4, maxWorkers: 6 })
        .constraints(gpuJob),
      job('cpu')
        .ps({ [CPU]: 2 })
        .worker({ [CPU]: 2 })
        .bounds({ maxPs: 4, maxWorkers: 8 })
        .constraints(poolB),
      job('free')
        .ps({ [CPU]: 1 })
        .worker({ [CPU]: 1 })
        .bounds({ maxPs: 2, maxWorkers: 2 }),
      job('nowhere')
        .ps({ [CPU]: 1 })
        .worker({ [CPU]: 1 })
        .constraints({ ps: [{ nodeSelector: { pool: 'z' } }] }),
    )
    .build();
}

const run = (d: readonly JobDecision[], id: string) => {
  const found = d.find((x) => x.jobId === id);
  return found?.action === 'run' ? found : null;
};

describe.each(policyNames())('node constraints under %s', (name) => {
  const policy = getPolicy(name);

  it('places every task only where its role is admitted, and still runs the constrained jobs', () => {
    const i = input();
    const { jobs: decisions } = policy.decide(i);
    const servers = new Map(i.servers.map((s) => [s.name, s]));
    for (const d of decisions) {
      if (d.action !== 'run') continue;
      const constraints = i.jobs.find((j) => j.id === d.jobId)?.constraints;
      for (const t of d.placement) {
        const s = servers.get(t.server);
        expect(s, `${d.jobId} ${t.role} ${t.index} on an unknown server`).toBeDefined();
        if (s) expect(admitsAll(constraints?.[t.role], s), `${d.jobId} ${t.role} on ${t.server}`).toBe(true);
      }
    }
    expect(run(decisions, 'gpu'), 'the GPU job runs').not.toBeNull();
    expect(run(decisions, 'cpu'), 'the pool-b job runs').not.toBeNull();
    const nowhere = decisions.find((d) => d.jobId === 'nowhere');
    expect(nowhere).toMatchObject({
      action: 'wait',
      reason: expect.stringMatching(/no server admits the parameter server/),
    });
  });

  it('moves a running task off a server its template no longer admits', () => {
    const i = input();
    const moved: PolicyInput = {
      ...i,
      jobs: i.jobs.map((j) =>
        j.id === 'cpu'
          ? {
              ...j,
              current: {
                shape: { ps: 1, workers: 1 },
                placement: [
                  { role: 'ps', index: 0, server: 'a1' },
                  { role: 'worker', index: 0, server: 'a1' },
                ],
              },
            }
          : j,
      ),
    };
    const d = run(policy.decide(moved).jobs, 'cpu');
    expect(d, 'the job still runs').not.toBeNull();
    const psServers = d?.placement.filter((t) => t.role === 'ps').map((t) => t.server);
    expect(new Set(psServers)).toEqual(new Set(['b1']));
  });

  it('decides as before when constraints admit every server and labels or taints bind no one', () => {
    const base = snapshot()
      .servers(server('s1').cpu(16), server('s2').cpu(8).gpus(2))
      .jobs(
        job('x')
          .worker({ [CPU]: 1, [GPU]: 1 })
          .bounds({ maxWorkers: 4 }),
        job('y').bounds({ maxPs: 3, maxWorkers: 5 }),
      )
      .build();
    const decorated: PolicyInput = {
      ...base,
      servers: base.servers.map((s) => ({
        ...s,
        labels: { zone: 'z1' },
        taints: [{ key: 'k', effect: 'PreferNoSchedule' }],
      })),
      jobs: base.jobs.map((j) => ({
        ...j,
        constraints: { ps: [PLAIN], worker: [{ nodeSelector: { zone: 'z1' } }] },
      })),
    };
    expect(policy.decide(decorated)).toEqual(policy.decide(base));
  });
});
