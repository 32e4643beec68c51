import { describe, expect, it } from 'vitest';
import { crdManifest } from '../../controller/src/k8s/crd';
import { validateCustomResource } from './crd-schema';
import { compileLabelSelector } from './label-selector';
import { typesFromCrd } from './resources';

const [type] = typesFromCrd(crdManifest());
const valid = () => ({
  apiVersion: 'optimus.dev/v1alpha1',
  kind: 'OptimusJob',
  metadata: { name: 'j' },
  spec: {
    mode: 'sync',
    container: { image: 'mxnet/python:1.9.1', command: ['python', 'train.py'] },
    ps: { resources: { requests: { cpu: '2', memory: '4Gi' } } },
    worker: { resources: { requests: { cpu: 4, 'nvidia.com/gpu': '1' } } },
    batchSize: 128,
    convergence: { threshold: 0.02, patience: 3, stepsPerEpoch: 500 },
    scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 8 },
  },
});
type Job = ReturnType<typeof valid>;

describe('OptimusJob CRD', () => {
  it('is group optimus.dev, v1alpha1, namespaced, with a status subresource and printer columns', () => {
    expect(type).toMatchObject({
      group: 'optimus.dev',
      version: 'v1alpha1',
      plural: 'optimusjobs',
      kind: 'OptimusJob',
      namespaced: true,
      status: true,
    });
    const columns = (
      crdManifest() as { spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } }
    ).spec.versions[0]!.additionalPrinterColumns.map((c) => c.name);
    expect(columns).toEqual(['Phase', 'PS', 'Workers', 'Progress', 'Predicted-Completion', 'Age']);
  });

  it('accepts a valid job', () => expect(validateCustomResource(type!.crdSchema, valid())).toEqual([]));

  it.each<{ name: string; edit: (j: Job) => void; error: string }>([
    {
      name: 'missing spec.container.image',
      edit: (j) => delete (j.spec.container as Partial<Job['spec']['container']>).image,
      error: 'spec.container.image: Required value',
    },
    { name: 'unknown mode', edit: (j) => (j.spec.mode = 'sometimes'), error: 'spec.mode: Unsupported value' },
    { name: 'batch size 0', edit: (j) => (j.spec.batchSize = 0), error: 'spec.batchSize' },
    {
      name: 'threshold 0',
      edit: (j) => (j.spec.convergence.threshold = 0),
      error: 'spec.convergence.threshold',
    },
    {
      name: 'patience as a string',
      edit: (j) => ((j.spec.convergence as Record<string, unknown>)['patience'] = '3'),
      error: 'must be of type integer',
    },
    {
      name: 'bad quantity',
      edit: (j) => (j.spec.ps.resources.requests.cpu = 'two'),
      error: 'spec.ps.resources.requests.cpu',
    },
    { name: 'empty command', edit: (j) => (j.spec.container.command = []), error: 'spec.container.command' },
    {
      name: 'no scaling',
      edit: (j) => delete (j.spec as Partial<Job['spec']>).scaling,
      error: 'spec.scaling: Required value',
    },
    {
      name: 'maxWorkers over the cap',
      edit: (j) => (j.spec.scaling.maxWorkers = 5000),
      error: 'spec.scaling.maxWorkers',
    },
  ])('rejects $name', ({ edit, error }) => {
    const j = valid();
    edit(j);
    expect(validateCustomResource(type!.crdSchema, j).join('\n')).toContain(error);
  });
});

describe('label selectors', () => {
  const labels = { app: 'x', tier: 'db', 'optimus.dev/job': 'j' };
  it.each([
    ['', true],
    ['app=x', true],
    ['app==x,tier=db', true],
    ['app!=x', false],
    ['tier in (web, db)', true],
    ['tier notin (db)', false],
    ['optimus.dev/job', true],
    ['!optimus.dev/job', false],
    ['missing', false],
  ] as const)('%j matches: %s', (sel, expected) => expect(compileLabelSelector(sel)(labels)).toBe(expected));
  it('rejects a malformed selector', () =>
    expect(() => compileLabelSelector('a b c')).toThrow('unable to parse'));
});
