/**
 * The OptimusJob CRD comes from the one shared file, behind crds.enabled with crds.keep; the
 * example job shipped with the chart is accepted by that CRD's schema; `npm run chart:render`
 * prints what users would `kubectl apply`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Pod } from 'kubernetes-models/v1/Pod';
import { FRAMEWORKS } from '../../shared/src/schemas';
import { parseSpec } from '../../controller/src/k8s/api/optimus-job';
import type { OptimusJob } from '../../controller/src/k8s/api/optimus-job';
import { buildJobPods } from '../../controller/src/k8s/rollout/pod-builder';
import { toJobSpecInput } from '../../controller/src/k8s/runtime-backend';
import { parseJobSpec } from '../../controller/src/runtime/job-spec';
import { CHART_DIR, REPO_ROOT, ensureHelm, runHelm } from './helm';
import { checkOpenApi, type OpenApiSchema } from './openapi-check';
import { findObject, parseManifests, renderChart, type K8sObject } from './render';
import { startApiDouble } from '../k8s-api-double/server';

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string };
    versions: { name: string; schema: { openAPIV3Schema: OpenApiSchema } }[];
  };
}
const sharedCrd = (): Crd =>
  parse(readFileSync(join(CHART_DIR, 'files', 'optimusjob-crd.yaml'), 'utf8')) as Crd;
/** The OptimusJob document of an example file (the file may also hold a PVC). */
const exampleJob = (file: string): Record<string, unknown> => {
  const docs = parseAllDocuments(readFileSync(join(CHART_DIR, 'examples', file), 'utf8')).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
  const job = docs.find((d) => d['kind'] === 'OptimusJob');
  if (!job) throw new Error(`${file} has no OptimusJob`);
  return job;
};
const EXAMPLES = [
  'optimusjob-resnet50.yaml',
  'optimusjob-tf2-keras.yaml',
  'optimusjob-pytorch-ps.yaml',
] as const;
const example = () => exampleJob(EXAMPLES[0]);

let base: K8sObject[];
beforeAll(async () => {
  ensureHelm();
  base = await renderChart();
});

describe('OptimusJob CRD', () => {
  it('is rendered from files/optimusjob-crd.yaml unchanged except labels and the keep policy', () => {
    const rendered = findObject(base, 'CustomResourceDefinition');
    const file = sharedCrd();
    expect(rendered['spec']).toEqual(file.spec);
    expect(rendered.metadata.name).toBe(file.metadata.name);
    expect(rendered.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(rendered.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
  });

  it('accepts as spec.logFormat exactly the log formats defined in shared/ (unset: auto)', () => {
    const spec = sharedCrd().spec.versions[0]!.schema.openAPIV3Schema.properties?.['spec'];
    expect(spec?.properties?.['logFormat']?.enum).toEqual([...FRAMEWORKS]);
  });

  it('drops the keep policy with crds.keep=false and the CRD with crds.enabled=false', async () => {
    const notKept = findObject(await renderChart({ set: ['crds.keep=false'] }), 'CustomResourceDefinition');
    expect(notKept.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
    const off = await renderChart({ set: ['crds.enabled=false'] });
    expect(off.filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);
  });
});

describe.each(EXAMPLES)('example %s', (file) => {
  it("is accepted by the CRD's schema", () => {
    const crd = sharedCrd();
    const job = exampleJob(file);
    const version = crd.spec.versions.find((v) => `${crd.spec.group}/${v.name}` === job['apiVersion']);
    expect(version, 'example apiVersion is served by the CRD').toBeDefined();
    expect(job['kind']).toBe(crd.spec.names.kind);
    expect(checkOpenApi(version!.schema.openAPIV3Schema, job)).toEqual([]);
  });

  it('is accepted by the controller and becomes valid Pods', () => {
    const job = exampleJob(file) as unknown as OptimusJob;
    const parsed = parseSpec(job.spec);
    expect(parsed.ok ? '' : parsed.error).toBe('');
    if (!parsed.ok) return;
    const pods = buildJobPods({
      job: { ...job, metadata: { ...job.metadata, namespace: 'ml', uid: 'u' } },
      spec: parsed.spec,
      shape: { ps: 2, workers: 2 },
      placement: [
        { role: 'ps', index: 0, server: 'a' },
        { role: 'ps', index: 1, server: 'b' },
        { role: 'worker', index: 0, server: 'c' },
        { role: 'worker', index: 1, server: 'd' },
      ],
    });
    expect(pods).toHaveLength(5);
    for (const p of pods) expect(() => new Pod(p as never).validate()).not.toThrow();
  });
});

describe('the TF 2.x ParameterServerStrategy example', () => {
  it('reaches the runtime as a job whose progress comes from its coordinator, which gets the sidecar', () => {
    const job = exampleJob('optimusjob-tf2-keras.yaml') as unknown as OptimusJob;
    const parsed = parseSpec(job.spec);
    if (!parsed.ok) throw new Error(parsed.error);
    const input = toJobSpecInput(
      {
        id: 'ml/mnist-ps',
        job: { ...job, metadata: { ...job.metadata, namespace: 'ml' } },
        valid: true,
        spec: parsed.spec,
      },
      {},
    );
    const spec = parseJobSpec(input);
    expect(spec.ok && spec.spec.progressFrom).toBe('coordinator');
    const pods = buildJobPods({
      job: { ...job, metadata: { ...job.metadata, namespace: 'ml', uid: 'u' } },
      spec: parsed.spec,
      shape: { ps: 1, workers: 2 },
      placement: [
        { role: 'ps', index: 0, server: 'a' },
        { role: 'worker', index: 0, server: 'b' },
        { role: 'worker', index: 1, server: 'c' },
      ],
    });
    const chief = pods.find((p) => p.metadata?.labels?.['optimus.dev/role'] === 'scheduler');
    expect(chief?.metadata?.annotations?.['optimus.dev/inject']).toBe('true');
  });

  it('is refused without a coordinator template', () => {
    const spec = exampleJob('optimusjob-tf2-keras.yaml')['spec'] as { replicaSpecs: Record<string, unknown> };
    const { Scheduler: _gone, ...rest } = spec.replicaSpecs;
    const parsed = parseSpec({ ...spec, replicaSpecs: rest });
    expect(parsed.ok ? '' : parsed.error).toMatch(/coordinator/);
  });
});

describe('the example check', () => {
  it('rejects a broken job (so the cases above can fail)', () => {
    const crd = sharedCrd();
    const job = example();
    const spec = job['spec'] as Record<string, unknown>;
    const broken = { ...job, spec: { ...spec, mode: 'sometimes', batchSize: 0, convergence: undefined } };
    delete (broken.spec as Record<string, unknown>)['convergence'];
    const errors = checkOpenApi(crd.spec.versions[0]!.schema.openAPIV3Schema, broken);
    expect(errors.join('\n')).toMatch(/mode.*enum/);
    expect(errors.join('\n')).toMatch(/batchSize.*minimum/);
    expect(errors.join('\n')).toMatch(/convergence: required/);
  });
});

describe('NOTES.txt', () => {
  it('tells the user how to test the install, submit the example job and watch it', async () => {
    const r = await runHelm([
      'install',
      'optimus',
      CHART_DIR,
      '--namespace',
      'optimus-system',
      '--dry-run=client',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
    expect(notes).toContain('helm test optimus -n optimus-system');
    expect(notes).toContain('examples/optimusjob-resnet50.yaml');
    expect(notes).toContain('kubectl -n ml get optimusjobs -w');
    expect(notes).toContain('kubectl -n ml create configmap optimus-mxnet --from-file=');
    // The bundled broker: each job gets its own credential, nothing to copy.
    expect(notes).toContain('the controller creates the Secret <job>-optimus-broker in the');
    const jobName = (example()['metadata'] as { name: string }).name;
    expect(notes).toContain(`/api/v1/jobs/ml/${jobName}`);
    // The namespace is enabled for jobs, and the API's calls carry the chart's token.
    expect(notes).toContain('kubectl label namespace ml optimus.dev/jobs=enabled');
    expect(notes).toContain('get secret optimus-controller-api-token');
    expect(notes).toContain('curl -s -H "Authorization: Bearer $TOKEN" localhost:8080/metrics');
  });
});

describe('npm run chart:render', () => {
  const run = (args: string[]): Promise<{ code: number; stdout: string }> =>
    new Promise((resolveRun) => {
      const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
      execFile(
        tsx,
        [join(REPO_ROOT, 'test', 'chart', 'render-cli.ts'), ...args],
        { cwd: REPO_ROOT },
        (err, stdout) =>
          resolveRun({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout }),
      );
    });

  it('prints manifests that apply to an empty cluster in the order printed, as kubectl apply would', async () => {
    const r = await run([]);
    expect(r.code).toBe(0);
    const objs = parseManifests(r.stdout);
    expect(objs[0]).toMatchObject({ kind: 'Namespace', metadata: { name: 'optimus-system' } });
    const double = await startApiDouble();
    try {
      for (const o of objs) {
        const t = double.api.resolveKind(o.apiVersion, o.kind);
        expect(t, `${o.apiVersion} ${o.kind} is served`).toBeDefined();
        const group = t!.group ? `/apis/${t!.group}/${t!.version}` : `/api/${t!.version}`;
        const ns = t!.namespaced ? `/namespaces/${o.metadata.namespace ?? 'default'}` : '';
        // kubectl apply validates fields strictly (server-side) by default.
        const res = await fetch(`${double.url}${group}${ns}/${t!.plural}?fieldValidation=Strict`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(o),
        });
        expect(res.status, `${o.kind} ${o.metadata.name}: ${await res.text()}`).toBe(201);
      }
    } finally {
      await double.close();
    }
  });

  it('prints the default manifests without the helm test hooks', async () => {
    const r = await run([]);
    expect(r.code).toBe(0);
    const objs = parseManifests(r.stdout);
    expect(objs.some((o) => o.kind === 'Deployment' && o.metadata.name === 'optimus-controller')).toBe(true);
    expect(objs.filter((o) => o.kind === 'Pod')).toEqual([]);
    expect(
      objs.every((o) => o.metadata.namespace === undefined || o.metadata.namespace === 'optimus-system'),
    ).toBe(true);
  });
});
