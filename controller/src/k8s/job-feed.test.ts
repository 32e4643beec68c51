import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../runtime/job-spec';
import type { JobSink } from './job-feed';
import { syncJobs } from './job-feed';
import type { JobEntry } from './observe/job-source';
import type { OptimusJob } from './api/optimus-job';
import { parseSpec } from './api/optimus-job';
import { replicaSpecs } from './testing';

const spec = {
  mode: 'sync',
  replicaSpecs: replicaSpecs({ cpu: '1', memory: '2Gi' }, { cpu: '2' }, 'i'),
  batchSize: 32,
  convergence: { threshold: 0.02, patience: 2, stepsPerEpoch: 100 },
  scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 4 },
};

const entry = (
  name: string,
  o: { phase?: 'Succeeded'; spec?: unknown; namespace?: string } = {},
): JobEntry => {
  const job: OptimusJob = {
    metadata: { name, namespace: o.namespace ?? 'default' },
    spec: o.spec ?? spec,
    ...(o.phase ? { status: { phase: o.phase } } : {}),
  };
  const parsed = parseSpec(job.spec);
  const id = `${job.metadata.namespace}/${name}`;
  return parsed.ok
    ? { id, job, valid: true, spec: parsed.spec }
    : { id, job, valid: false, error: parsed.error };
};

class FakeSink implements JobSink {
  specs: JobSpec[] = [];
  async submit(s: JobSpec) {
    this.specs.push(s);
  }
  async remove(id: string) {
    this.specs = this.specs.filter((s) => `${s.namespace}/${s.name}` !== id);
  }
  records() {
    return this.specs.map((s) => ({ spec: s }));
  }
}

describe('job feed: OptimusJobs → runtime', () => {
  it('submits new valid jobs once, skips finished ones, removes deleted ones, reports rejects', async () => {
    const sink = new FakeSink();
    const first = await syncJobs(sink, [
      entry('a'),
      entry('done', { phase: 'Succeeded' }),
      entry('bad', { spec: { mode: 'x' } }),
      entry('Caps.Dots'),
    ]);
    expect(first.submitted).toEqual(['default/a']);
    expect(first.rejected.map((r) => r.id)).toEqual(['default/bad', 'default/Caps.Dots']);
    expect(sink.specs[0]).toMatchObject({
      name: 'a',
      // The PS demand includes the job's MXNet scheduler pod (100m, 256 Mi).
      psDemand: { cpu: 1.1, memory: 2 * 2 ** 30 + 256 * 2 ** 20 },
      workerDemand: { cpu: 2 },
      stepsPerEpoch: 100,
    });
    expect((await syncJobs(sink, [entry('a')])).submitted).toEqual([]);
    const gone = await syncJobs(sink, []);
    expect(gone.removed).toEqual(['default/a']);
    expect(sink.specs).toEqual([]);
  });

  it('keeps going past a job whose submit or removal throws, and reports it as failed', async () => {
    const sink = new FakeSink();
    await syncJobs(sink, [entry('old')]);
    const submit = sink.submit.bind(sink);
    sink.submit = async (s: JobSpec) => (s.name === 'x' ? Promise.reject(new Error('API down')) : submit(s));
    sink.remove = () => Promise.reject(new Error('API down'));
    const r = await syncJobs(sink, [entry('x'), entry('y')]);
    expect(r.submitted).toEqual(['default/y']);
    expect(r.failed).toEqual([
      { id: 'default/x', error: 'API down' },
      { id: 'default/old', error: 'API down' },
    ]);
    expect(r.rejected).toEqual([]);
  });
});

describe('job feed: pod overhead', () => {
  const GiB = 1024 ** 3;
  const MiB = 1024 ** 2;
  it('counts the injected sidecar on every pod and the MXNet scheduler pod on the PS tasks', async () => {
    const sink = new FakeSink();
    await syncJobs(sink, [entry('a')], { cpu: 0.01, memory: 48 * MiB });
    const [s] = sink.specs;
    // PS: 1 cpu / 2 GiB + sidecar 10m / 48 Mi + scheduler 100m / 256 Mi with its own sidecar.
    expect(s?.psDemand.cpu).toBeCloseTo(1.12, 9);
    expect(s?.psDemand.memory).toBe(2 * GiB + 48 * MiB + 256 * MiB + 48 * MiB);
    // Worker: 2 cpu + sidecar 10m / 48 Mi, no scheduler share.
    expect(s?.workerDemand.cpu).toBeCloseTo(2.01, 9);
    expect(s?.workerDemand.memory).toBe(48 * MiB);
  });
});
