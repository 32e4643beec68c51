import { describe, expect, it } from 'vitest';
import { parseJobSpec } from '../../runtime/job-spec';
import { constraintOf, nodeConstraintsOf } from './node-constraints';
import type { OptimusJobSpec } from '../api/optimus-job';
import { minimalJobSpec, podTemplate } from '../testing';

const withSpec = (ps: Record<string, unknown>, worker: Record<string, unknown> = {}): OptimusJobSpec => {
  const t = (extra: Record<string, unknown>) => {
    const base = podTemplate({ requests: { cpu: '1' } });
    return { template: { ...base, spec: { ...base.spec, ...extra } } };
  };
  return { ...minimalJobSpec, replicaSpecs: { PS: t(ps), Worker: t(worker) } };
};

describe('node constraints of pod templates', () => {
  it('a template with none still yields a constraint (it keeps the pod off tainted nodes)', () => {
    expect(constraintOf({ containers: [] })).toEqual({});
  });

  it('reads nodeSelector, required node-affinity terms and tolerations; ignores preferred terms', () => {
    const c = constraintOf({
      containers: [],
      nodeSelector: { pool: 'a' },
      tolerations: [
        { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 },
      ],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 1, preference: { matchExpressions: [{ key: 'fast', operator: 'Exists' }] } },
          ],
        },
      },
    });
    expect(c).toEqual({
      nodeSelector: { pool: 'a' },
      terms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }],
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    });
  });

  it("a PS carries its scheduler pod's constraint too, and the runtime's schema accepts the result", () => {
    const spec = withSpec({ nodeSelector: { pool: 'a' } }, { tolerations: [{ operator: 'Exists' }] });
    const nc = nodeConstraintsOf(spec);
    // No Scheduler template: the scheduler pod is made from the PS template, so one constraint.
    expect(nc).toEqual({
      ps: [{ nodeSelector: { pool: 'a' } }],
      worker: [{ tolerations: [{ operator: 'Exists' }] }],
    });
    const parsed = parseJobSpec({
      name: 'j',
      batchSize: 32,
      stepsPerEpoch: 10,
      psDemand: { cpu: 1 },
      workerDemand: { cpu: 1 },
      nodeConstraints: nc,
    });
    expect(parsed.ok).toBe(true);
  });

  it('the schema refuses an operator Kubernetes does not have, naming the field', () => {
    const r = parseJobSpec({
      name: 'j',
      batchSize: 32,
      stepsPerEpoch: 10,
      psDemand: { cpu: 1 },
      workerDemand: { cpu: 1 },
      nodeConstraints: { ps: [{ terms: [{ matchExpressions: [{ key: 'k', operator: 'Like' }] }] }] },
    });
    expect(r).toMatchObject({
      ok: false,
      error: expect.stringContaining('nodeConstraints.ps.0.terms.0.matchExpressions.0.operator'),
    });
  });
});
