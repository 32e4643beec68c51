import { describe, expect, it } from 'vitest';
import type { BrokerIdentities } from './identities';
import { JobAccess, type CredentialStore } from './job-access';
import { jobAcls, jobPassword, jobTasks, taskUsername, type JobIdentity } from './job-identity';

const job: JobIdentity = { namespace: 'ml', job: 'resnet', maxPs: 2, maxWorkers: 3 };

function fakes(failEnsure = false) {
  const log: string[] = [];
  let fail = failEnsure;
  const identities: BrokerIdentities = {
    ensureController: async () => void log.push('controller'),
    ensureJob: async (j, p) => {
      if (fail) throw new Error('broker down');
      log.push(`ensure ${j.job} ${p.length}`);
    },
    removeJob: async (j) => void log.push(`remove ${j.job}`),
  };
  const credentials: CredentialStore = {
    put: async (j) => void log.push(`put ${j.job}`),
    remove: async (j) => void log.push(`delete ${j.job}`),
  };
  return { log, identities, credentials, heal: () => (fail = false) };
}

describe('job identities (pure)', () => {
  it('one bound identity per task the shape bounds allow, the scheduler included', () => {
    expect(jobTasks(job).map(taskUsername)).toEqual([
      'optimus.ml.resnet.ps.0',
      'optimus.ml.resnet.ps.1',
      'optimus.ml.resnet.worker.0',
      'optimus.ml.resnet.worker.1',
      'optimus.ml.resnet.worker.2',
      'optimus.ml.resnet.scheduler.0',
    ]);
  });

  it("a job's role publishes only its own telemetry and reads only its own watermarks", () => {
    expect(jobAcls(job).map((a) => `${a.acltype} ${a.topic}`)).toEqual([
      'publishClientSend optimus/v1/ml/resnet/+/+/metrics',
      'publishClientSend optimus/v1/ml/resnet/+/+/status',
      'subscribePattern optimus/v1/ml/resnet/+/+/stored',
      'publishClientReceive optimus/v1/ml/resnet/+/+/stored',
      'subscribePattern optimus/v1/controller/status',
      'publishClientReceive optimus/v1/controller/status',
    ]);
  });

  it('derives a different password per job from the key, the same every time', () => {
    expect(jobPassword('k', job)).toBe(jobPassword('k', job));
    expect(jobPassword('k', job)).not.toBe(jobPassword('k', { ...job, job: 'other' }));
    expect(jobPassword('k', job)).not.toBe(jobPassword('k2', job));
  });
});

describe('JobAccess', () => {
  it('remembers grants until the broker connects, then applies them (credential first)', async () => {
    const f = fakes();
    const access = new JobAccess({ ...f, key: 'k' });
    await access.grant(job, 1000);
    expect(f.log).toEqual([]);
    await access.reconcile();
    expect(f.log).toEqual(['controller', 'put resnet', 'ensure resnet 43']);
    expect(access.has(job)).toBe(true);
    await access.revoke('ml/resnet');
    expect(f.log.slice(-2)).toEqual(['remove resnet', 'delete resnet']);
    expect(access.has(job)).toBe(false);
  });

  it('never fails an admission: a broker that refuses is retried', async () => {
    const f = fakes(true);
    const errors: unknown[] = [];
    const access = new JobAccess({ ...f, key: 'k', retryMs: 20, onError: (e) => errors.push(e) });
    await access.reconcile();
    await access.grant(job, 50);
    expect(access.has(job)).toBe(false);
    expect(errors.length).toBeGreaterThan(0);
    f.heal();
    for (let i = 0; i < 50 && !access.has(job); i++) await new Promise((r) => setTimeout(r, 20));
    expect(access.has(job)).toBe(true);
    access.close();
  });
});
