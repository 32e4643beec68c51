/**
 * `status.models` is written by JSON merge patch, which merges maps: a key we stop reporting
 * must still disappear from the stored object, at any depth.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makeClients } from '../../controller/src/k8s/api/clients';
import { JobApi } from '../../controller/src/k8s/api/job-api';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import { ProgressPublisher } from '../../controller/src/k8s/status/progress-publisher';
import { MAX_MODELS_BYTES, StatusReporter } from '../../controller/src/k8s/status/status-reporter';
import type { JobReport } from '../../controller/src/runtime/backend';
import { CONTROLLER_TOKEN } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';

let cluster: TestCluster | undefined;
afterEach(async () => {
  await cluster?.close();
});

async function setUp() {
  cluster = await startTestCluster([]);
  await cluster.submit({ name: 'cifar' });
  const reporter = new StatusReporter(
    new JobApi(makeClients(kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN))),
  );
  const stored = async () => (await cluster!.job('default', 'cifar')).status?.models;
  return { reporter, stored };
}

const fitted = {
  convergence: { status: 'ok', predictedTotalSteps: 9000, lower: 8000, upper: 10_000, beta: [1, 2, 3] },
  speedFitted: true,
  remaining: { steps: 5000, seconds: 1200 },
};

describe('status.trainerStatus and the printer columns against the API double (CRD schema enforced)', () => {
  it('writes progressPercentage, estimatedRemainingSeconds, lastUpdatedTime and the ETA text', async () => {
    cluster = await startTestCluster([]);
    await cluster.submit({ name: 'cifar' });
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const reporter = new StatusReporter(
      new JobApi(makeClients(kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN))),
      () => now,
    );
    await reporter.report('default/cifar', { progress: 0.25, predictedCompletionSec: now / 1000 + 5400 });
    let status = (await cluster.job('default', 'cifar')).status!;
    expect(status.trainerStatus).toEqual({
      progressPercentage: 25,
      estimatedRemainingSeconds: 5400,
      lastUpdatedTime: '2026-01-01T12:00:00Z',
    });
    expect(status.eta).toBe('1h30m');
    expect(status.progress).toBe('25%');
    // A report without a new prediction: the ETA is recomputed from the stored one, as of now.
    now += 600_000;
    await reporter.report('default/cifar', { progress: 0.4 });
    status = (await cluster.job('default', 'cifar')).status!;
    expect(status.trainerStatus).toMatchObject({ progressPercentage: 40, estimatedRemainingSeconds: 4800 });
    expect(status.eta).toBe('1h20m');
    // Finished: 100 %, nothing left, no ETA, no stale prediction.
    await reporter.report('default/cifar', { progress: 0.97, predictedCompletionSec: null, finished: true });
    status = (await cluster.job('default', 'cifar')).status!;
    expect(status.trainerStatus).toEqual({
      progressPercentage: 100,
      estimatedRemainingSeconds: 0,
      lastUpdatedTime: '2026-01-01T12:10:00Z',
    });
    expect(status.eta).toBeUndefined();
    expect(status.predictedCompletionTime).toBeUndefined();
  });
});

describe('status.models against the API double', () => {
  const cases: { name: string; next: Record<string, unknown> }[] = [
    {
      name: 'a top-level key no longer reported',
      next: { convergence: fitted.convergence, speedFitted: true },
    },
    {
      name: 'nested keys of a fit that fell back (ok → insufficient-data)',
      next: { ...fitted, convergence: { status: 'insufficient-data', reason: 'lr drop' } },
    },
    { name: 'everything replaced by other keys', next: { note: 'other' } },
    { name: 'a list that shrank', next: { ...fitted, convergence: { ...fitted.convergence, beta: [4] } } },
  ];
  it.each(cases)('removes $name', async ({ next }) => {
    const { reporter, stored } = await setUp();
    await reporter.report('default/cifar', { models: fitted });
    expect(await stored()).toEqual(fitted);
    await reporter.report('default/cifar', { models: next });
    expect(await stored()).toEqual(next);
  });

  it('keeps the models when a report carries none', async () => {
    const { reporter, stored } = await setUp();
    await reporter.report('default/cifar', { models: fitted });
    await reporter.report('default/cifar', { progress: 0.5 });
    expect(await stored()).toEqual(fitted);
  });

  it('leaves only the note when the models grow too large', async () => {
    const { reporter, stored } = await setUp();
    await reporter.report('default/cifar', { models: fitted });
    await reporter.report('default/cifar', { models: { big: 'x'.repeat(MAX_MODELS_BYTES) } });
    expect(await stored()).toEqual({ note: `models larger than ${MAX_MODELS_BYTES} bytes omitted` });
  });

  it('through the publisher: a fit that falls back loses its stale prediction', async () => {
    const { reporter, stored } = await setUp();
    const publisher = new ProgressPublisher(reporter);
    const report = (models: Record<string, unknown>): JobReport => ({
      jobId: 'default/cifar',
      phase: 'running',
      current: null,
      target: null,
      restarts: 0,
      end: null,
      reason: null,
      degraded: null,
      restartCost: {},
      progress: null,
      predictedCompletionMs: null,
      models,
    });
    publisher.push([report(fitted)]);
    await publisher.idle();
    const fallback = { ...fitted, convergence: { status: 'insufficient-data', reason: null } };
    publisher.push([report(fallback)]);
    await publisher.idle();
    expect(publisher.writes).toBe(2);
    expect(await stored()).toEqual({ ...fitted, convergence: { status: 'insufficient-data' } });
  });
});
