import { describe, expect, it } from 'vitest';
import type { NodeConstraint, ServerSnapshot } from '../types';
import { admits, admitsAll } from './node-match';

const node = (o: Partial<ServerSnapshot> = {}): ServerSnapshot => ({
  name: 'n1',
  capacity: { cpu: 8 },
  reserved: {},
  ...o,
});
const gpu = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
const req = (key: string, operator: string, values?: string[]) => ({
  key,
  operator,
  ...(values ? { values } : {}),
});

describe('admits (Kubernetes NodeAffinity and TaintToleration semantics)', () => {
  const cases: [string, NodeConstraint, Partial<ServerSnapshot>, boolean][] = [
    ['no constraint, plain node', {}, {}, true],
    ['nodeSelector matches', { nodeSelector: { pool: 'a' } }, { labels: { pool: 'a' } }, true],
    ['nodeSelector value differs', { nodeSelector: { pool: 'a' } }, { labels: { pool: 'b' } }, false],
    ['nodeSelector label missing', { nodeSelector: { pool: 'a' } }, {}, false],
    ['untolerated NoSchedule taint', {}, { taints: [gpu] }, false],
    ['untolerated NoExecute taint', {}, { taints: [{ key: 'k', effect: 'NoExecute' }] }, false],
    ['PreferNoSchedule never repels', {}, { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }, true],
    ['Equal toleration', { tolerations: [{ key: gpu.key, value: 'present' }] }, { taints: [gpu] }, true],
    [
      'Equal toleration, other value',
      { tolerations: [{ key: gpu.key, value: 'x' }] },
      { taints: [gpu] },
      false,
    ],
    [
      'Exists toleration on the key',
      { tolerations: [{ key: gpu.key, operator: 'Exists' }] },
      { taints: [gpu] },
      true,
    ],
    ['Exists with no key tolerates all', { tolerations: [{ operator: 'Exists' }] }, { taints: [gpu] }, true],
    [
      'toleration for another effect',
      { tolerations: [{ key: gpu.key, operator: 'Exists', effect: 'NoExecute' }] },
      { taints: [gpu] },
      false,
    ],
    [
      'one of two taints tolerated',
      { tolerations: [{ key: gpu.key, operator: 'Exists' }] },
      { taints: [gpu, { key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
      false,
    ],
    [
      'affinity In',
      { terms: [{ matchExpressions: [req('zone', 'In', ['a', 'b'])] }] },
      { labels: { zone: 'b' } },
      true,
    ],
    ['affinity In, absent', { terms: [{ matchExpressions: [req('zone', 'In', ['a'])] }] }, {}, false],
    [
      'affinity NotIn, absent label',
      { terms: [{ matchExpressions: [req('zone', 'NotIn', ['a'])] }] },
      {},
      true,
    ],
    [
      'affinity NotIn',
      { terms: [{ matchExpressions: [req('zone', 'NotIn', ['a'])] }] },
      { labels: { zone: 'a' } },
      false,
    ],
    [
      'affinity Exists',
      { terms: [{ matchExpressions: [req('gpu', 'Exists')] }] },
      { labels: { gpu: '' } },
      true,
    ],
    [
      'affinity DoesNotExist',
      { terms: [{ matchExpressions: [req('gpu', 'DoesNotExist')] }] },
      { labels: { gpu: '' } },
      false,
    ],
    [
      'affinity Gt',
      { terms: [{ matchExpressions: [req('mem', 'Gt', ['64'])] }] },
      { labels: { mem: '128' } },
      true,
    ],
    [
      'affinity Lt',
      { terms: [{ matchExpressions: [req('mem', 'Lt', ['64'])] }] },
      { labels: { mem: '128' } },
      false,
    ],
    [
      'affinity Gt, not an integer',
      { terms: [{ matchExpressions: [req('mem', 'Gt', ['64'])] }] },
      { labels: { mem: '1e3' } },
      false,
    ],
    [
      'terms are ORed',
      {
        terms: [
          { matchExpressions: [req('zone', 'In', ['a'])] },
          { matchExpressions: [req('zone', 'In', ['b'])] },
        ],
      },
      { labels: { zone: 'b' } },
      true,
    ],
    [
      'expressions in a term are ANDed',
      { terms: [{ matchExpressions: [req('zone', 'In', ['b']), req('gpu', 'Exists')] }] },
      { labels: { zone: 'b' } },
      false,
    ],
    ['an empty term matches nothing', { terms: [{}] }, {}, false],
    ['no terms at all (empty list) matches nothing', { terms: [] }, {}, false],
    [
      'matchFields on metadata.name',
      { terms: [{ matchFields: [req('metadata.name', 'In', ['n1'])] }] },
      {},
      true,
    ],
    [
      'matchFields, another node',
      { terms: [{ matchFields: [req('metadata.name', 'In', ['n2'])] }] },
      {},
      false,
    ],
    [
      'nodeSelector and affinity both hold',
      { nodeSelector: { pool: 'a' }, terms: [{ matchExpressions: [req('zone', 'In', ['x'])] }] },
      { labels: { pool: 'a', zone: 'y' } },
      false,
    ],
  ];
  it.each(cases)('%s', (_name, constraint, n, expected) => {
    expect(admits(constraint, node(n))).toBe(expected);
  });

  it('a list admits only when every constraint does (a PS pod and its scheduler pod)', () => {
    const n = node({ labels: { pool: 'a' }, taints: [gpu] });
    const tolerant = { tolerations: [{ operator: 'Exists' }] };
    expect(admitsAll([tolerant, { nodeSelector: { pool: 'a' } }], n)).toBe(false);
    expect(admitsAll([tolerant, { ...tolerant, nodeSelector: { pool: 'a' } }], n)).toBe(true);
    expect(admitsAll(undefined, n)).toBe(true);
  });
});
