import { describe, expect, it } from 'vitest';
import { crdManifest } from '../../controller/src/k8s/api/crd';
import { API_VERSION, VERSION } from '../../controller/src/k8s/api/names';
import { replicaSpecs } from '../../controller/src/k8s/testing';
import { admitCustomResource, validateCustomResource } from './crd-schema';
import { compileLabelSelector } from './label-selector';
import { typesFromCrd } from './resources';

const [type] = typesFromCrd(crdManifest());
const valid = () => ({
  apiVersion: API_VERSION,
  kind: 'OptimusJob',
  metadata: { name: 'j' },
  spec: {
    mode: 'sync',
    replicaSpecs: replicaSpecs({ cpu: '2', memory: '4Gi' }, { cpu: 4, 'nvidia.com/gpu': '1' }),
    batchSize: 128,
    convergence: { threshold: 0.02, patience: 3, stepsPerEpoch: 500 },
    scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 8 },
  },
});
type Job = ReturnType<typeof valid>;

describe('OptimusJob CRD', () => {
  it('is group optimus.dev, the current version, namespaced, with a status subresource and printer columns', () => {
    expect(type).toMatchObject({
      group: 'optimus.dev',
      version: VERSION,
      plural: 'optimusjobs',
      kind: 'OptimusJob',
      namespaced: true,
      status: true,
    });
    const columns = (
      crdManifest() as { spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } }
    ).spec.versions[0]!.additionalPrinterColumns.map((c) => c.name);
    expect(columns).toEqual([
      'Phase',
      'PS',
      'Workers',
      'Progress%',
      'ETA',
      'Age',
      'Restarts',
      'Predicted-Completion',
    ]);
  });

  it('has printer columns for shape, progress and ETA whose paths exist in the schema with their types', () => {
    const crd = crdManifest() as {
      spec: { versions: { additionalPrinterColumns: { name: string; type: string; jsonPath: string }[] }[] };
    };
    type S = { type?: string; properties?: Record<string, S> };
    const schemaAt = (path: string): S | undefined =>
      path
        .split('.')
        .filter(Boolean)
        .reduce<S | undefined>((s, k) => s?.properties?.[k], type!.crdSchema as S);
    for (const c of crd.spec.versions[0]!.additionalPrinterColumns) {
      if (c.jsonPath === '.metadata.creationTimestamp') continue; // ObjectMeta, not in the schema
      const s = schemaAt(c.jsonPath);
      expect(s, c.jsonPath).toBeDefined();
      // kubectl prints a `date` column as an age: a future time (a prediction) would show "<invalid>".
      expect(c.type, c.jsonPath).not.toBe('date');
      expect(s?.type, c.jsonPath).toBe(c.type);
    }
  });

  it('accepts a valid job', () => expect(validateCustomResource(type!.crdSchema, valid())).toEqual([]));

  it.each<{ name: string; edit: (j: Job) => void; error: string }>([
    {
      name: 'a PS template without containers',
      edit: (j) => (j.spec.replicaSpecs.PS.template.spec.containers = []),
      error: 'spec.replicaSpecs.PS.template.spec.containers: should have at least 1 items',
    },
    {
      name: 'no Worker template',
      edit: (j) => delete (j.spec.replicaSpecs as Partial<Job['spec']['replicaSpecs']>).Worker,
      error: 'spec.replicaSpecs.Worker: Required value',
    },
    {
      name: 'volumes that are not a list',
      edit: (j) =>
        ((j.spec.replicaSpecs.Worker.template.spec as Record<string, unknown>)['volumes'] = 'oops'),
      error: 'spec.replicaSpecs.Worker.template.spec.volumes: Invalid value: "string"',
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
      edit: (j) =>
        ((j.spec.replicaSpecs.PS.template.spec.containers[0]!.resources.requests as Record<string, unknown>)[
          'cpu'
        ] = 'two'),
      error: 'spec.replicaSpecs.PS.template.spec.containers[0].resources.requests.cpu',
    },
    {
      name: 'a command that is not a list',
      edit: (j) =>
        ((j.spec.replicaSpecs.PS.template.spec.containers[0] as Record<string, unknown>)['command'] =
          'python'),
      error: 'spec.replicaSpecs.PS.template.spec.containers[0].command',
    },
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

describe('pruning, as the API server does it', () => {
  it('drops fields the schema does not know and keeps the pod template as written', () => {
    const j = valid() as ReturnType<typeof valid> & { spec: Record<string, unknown> };
    j.spec['typo'] = 1;
    (j.spec['convergence'] as Record<string, unknown>)['patiance'] = 3;
    const worker = j.spec.replicaSpecs.Worker.template as Record<string, unknown> & {
      spec: Record<string, unknown>;
    };
    worker.spec['tolerations'] = [{ key: 'gpu', operator: 'Exists' }];
    worker.spec['nodeSelector'] = { pool: 'gpu' };
    (worker.spec['containers'] as Record<string, unknown>[])[0]!['volumeMounts'] = [
      { name: 'shm', mountPath: '/dev/shm', mountPropagation: 'None' },
    ];
    worker['metadata'] = { labels: { team: 'a' }, name: 'ignored' };
    const r = admitCustomResource(type!.crdSchema, j);
    expect(r.errors).toEqual([]);
    expect(r.dropped.sort()).toEqual([
      'spec.convergence.patiance',
      'spec.replicaSpecs.Worker.template.metadata.name',
      'spec.typo',
    ]);
    const kept = (r.object['spec'] as typeof j.spec).replicaSpecs.Worker.template as typeof worker;
    expect(kept.spec['tolerations']).toEqual([{ key: 'gpu', operator: 'Exists' }]);
    expect(kept.spec['nodeSelector']).toEqual({ pool: 'gpu' });
    expect((kept.spec['containers'] as Record<string, unknown>[])[0]!['volumeMounts']).toEqual([
      { name: 'shm', mountPath: '/dev/shm', mountPropagation: 'None' },
    ]);
    expect(kept['metadata']).toEqual({ labels: { team: 'a' } });
  });

  it('prunes status fields it does not declare', () => {
    const r = admitCustomResource(type!.crdSchema, { ...valid(), status: { phase: 'Running', bogus: 1 } });
    expect(r.dropped).toEqual(['status.bogus']);
    expect(r.object['status']).toEqual({ phase: 'Running' });
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
