import { describe, expect, it } from 'vitest';
import { CONDITION } from './api/conditions';
import { crdManifest } from './api/crd';
import type { Rejection } from './job-feed';
import { rejectionStatus, syncJobs } from './job-feed';
import type { JobEntry } from './observe/job-source';
import type { OptimusJob, OptimusJobStatus } from './api/optimus-job';
import { parseSpec } from './api/optimus-job';
import {
  DNS_LABEL_MAX,
  JOB_NAME_PATTERN,
  MAX_JOB_NAME_LENGTH,
  MAX_PS,
  MAX_WORKERS,
  POD_ROLES,
  jobNameProblem,
  podName,
} from './api/names';
import { minimalJobSpec } from './testing';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const nameOf = (length: number): string => 'j'.repeat(length);

describe('job names: the longest name that works', () => {
  it('is 51: 63 minus the longest pod suffix, `-worker-1023` (index up to maxWorkers − 1)', () => {
    expect(MAX_JOB_NAME_LENGTH).toBe(51);
    expect(podName(nameOf(51), 'worker', MAX_WORKERS - 1)).toHaveLength(DNS_LABEL_MAX);
  });

  it('keeps every pod name of a longest-name job a DNS-1123 label, for every index the CRD allows', () => {
    const job = nameOf(MAX_JOB_NAME_LENGTH);
    const highest = { scheduler: 0, ps: MAX_PS - 1, worker: MAX_WORKERS - 1 } as const;
    for (const role of POD_ROLES) {
      const name = podName(job, role, highest[role]);
      expect(name.length, name).toBeLessThanOrEqual(DNS_LABEL_MAX);
      expect(name).toMatch(DNS1123_LABEL);
    }
    expect(podName(`${job}j`, 'worker', MAX_WORKERS - 1).length).toBeGreaterThan(DNS_LABEL_MAX);
  });

  const cases: { name: string; job: string; problem: RegExp | null }[] = [
    { name: 'one letter', job: 'a', problem: null },
    { name: 'typical', job: 'resnet-50-cifar10', problem: null },
    { name: 'exactly the limit (51)', job: nameOf(51), problem: null },
    { name: 'one over the limit (52)', job: nameOf(52), problem: /52 characters, at most 51.*-worker-1023/ },
    { name: 'a DNS label but too long (63)', job: nameOf(63), problem: /63 characters, at most 51/ },
    { name: 'longer than any label (64)', job: nameOf(64), problem: /64 characters/ },
    { name: 'starts with a digit (Service names are DNS-1035)', job: '1job', problem: /DNS-1035/ },
    { name: 'has a dot (a subdomain, not a label)', job: 'a.b', problem: /DNS-1035/ },
    { name: 'ends with a dash', job: 'job-', problem: /DNS-1035/ },
    { name: 'upper case', job: 'Job', problem: /DNS-1035/ },
    { name: 'empty', job: '', problem: /DNS-1035/ },
  ];
  it.each(cases)('$name', ({ job, problem }) => {
    const got = jobNameProblem(job);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});

interface Rule {
  rule: string;
  message: string;
}
interface Schema {
  'x-kubernetes-validations'?: Rule[];
  properties?: Record<string, Schema>;
  maximum?: number;
}

describe('job names: the CRD says the same as the controller', () => {
  const crd = crdManifest() as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
  const root = crd.spec.versions[0]!.schema.openAPIV3Schema;
  const rules = root['x-kubernetes-validations'] ?? [];

  it('limits the length at the root with a CEL rule of the derived maximum', () => {
    const size = rules.find((r) => r.rule.startsWith('size(self.metadata.name)'));
    expect(size?.rule).toBe(`size(self.metadata.name) <= ${MAX_JOB_NAME_LENGTH}`);
    expect(size?.message).toContain(String(MAX_JOB_NAME_LENGTH));
  });

  // API servers before the mid-2026 CEL cost fix estimate metadata.name as unbounded, and a regex over
  // it can push the CRD over the cost budget and get it refused: the controller checks the form.
  it('keeps regular expressions on metadata.name out of the CRD', () => {
    expect(rules.filter((r) => r.rule.includes('.matches('))).toEqual([]);
    expect(JOB_NAME_PATTERN.test('job-1')).toBe(true);
  });

  it('bounds the replicas by the maxima the name length was derived from', () => {
    const scaling = root.properties?.['spec']?.properties?.['scaling']?.properties;
    expect(scaling?.['maxPs']?.maximum).toBe(MAX_PS);
    expect(scaling?.['maxWorkers']?.maximum).toBe(MAX_WORKERS);
  });
});

const spec = minimalJobSpec;

const jobNamed = (name: string, status?: OptimusJobStatus): OptimusJob => ({
  metadata: { name, namespace: 'default' },
  spec,
  ...(status ? { status } : {}),
});

const entryOf = (job: OptimusJob): JobEntry => {
  const parsed = parseSpec(job.spec);
  if (!parsed.ok) throw new Error(parsed.error);
  return { id: `default/${job.metadata.name}`, job, valid: true, spec: parsed.spec };
};

const sink = () => {
  const submitted: string[] = [];
  return {
    submitted,
    submit: async (s: { name: string }) => void submitted.push(s.name),
    remove: async () => undefined,
    records: () => [],
  };
};

describe('job names: the feed refuses a job whose name cannot work', () => {
  it('rejects a too-long name as InvalidName and submits the one at the limit', async () => {
    const s = sink();
    const r = await syncJobs(s, [entryOf(jobNamed(nameOf(52))), entryOf(jobNamed(nameOf(51)))]);
    expect(s.submitted).toEqual([nameOf(51)]);
    expect(r.rejected).toEqual([
      { id: `default/${nameOf(52)}`, reason: 'InvalidName', error: jobNameProblem(nameOf(52)) },
    ]);
  });

  it('leaves a job that already holds pods (started by an older controller) to the runtime', async () => {
    const s = sink();
    const running = jobNamed(nameOf(55), {
      phase: 'Running',
      shape: { ps: 1, workers: 1 },
      placement: [
        { role: 'ps', index: 0, server: 'n1' },
        { role: 'worker', index: 0, server: 'n1' },
      ],
    });
    const r = await syncJobs(s, [entryOf(running)]);
    expect(r.rejected).toEqual([]);
    expect(s.submitted).toEqual([nameOf(55)]);
  });
});

describe('job names: the status of a refused job', () => {
  const now = '2026-01-01T00:00:00Z';
  const byName: Rejection = { id: 'default/x', error: 'name too long', reason: 'InvalidName' };
  const bySpec: Rejection = { id: 'default/x', error: 'spec.mode: bad', reason: 'InvalidSpec' };
  const invalid = (r: Rejection) => ({
    type: CONDITION.Invalid,
    status: 'True' as const,
    reason: r.reason,
    message: r.error,
    lastTransitionTime: now,
  });

  const cases: { name: string; status?: OptimusJobStatus; r: Rejection; want: object }[] = [
    {
      name: 'a bad name fails the job, with the reason',
      r: byName,
      want: { phase: 'Failed', conditions: [invalid(byName)] },
    },
    {
      name: 'a bad spec only gets the condition (it can be fixed)',
      r: bySpec,
      want: { conditions: [invalid(bySpec)] },
    },
    {
      name: 'nothing to write when the status already says so',
      status: { phase: 'Failed', conditions: [invalid(byName)] },
      r: byName,
      want: {},
    },
    {
      name: 'the phase is still set when only the condition was there',
      status: { conditions: [invalid(byName)] },
      r: byName,
      want: { phase: 'Failed', conditions: [invalid(byName)] },
    },
  ];
  it.each(cases)('$name', ({ status, r, want }) => {
    expect(rejectionStatus(jobNamed('x', status), r, now)).toEqual(want);
  });
});
