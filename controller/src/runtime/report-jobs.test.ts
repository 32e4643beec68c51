import { afterEach, describe, expect, it } from 'vitest';
import type { JobReport } from './backend';
import type { Controller } from './controller';
import { buildController, FakeBackend, speedRecord, testJobSpec } from './testing';

/** The fake backend, plus the optional port method that shows job progress. */
class ReportingBackend extends FakeBackend {
  readonly reports: JobReport[][] = [];
  reportJobs(reports: readonly JobReport[]): void {
    this.reports.push([...reports]);
  }
}

const spec = testJobSpec;

let wall = 1_000;
const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

/** `n` records per running worker of `job`, at increasing wall times. */
function feed(c: Controller, backend: FakeBackend, job: string, n: number): void {
  const workers = backend.running.get(`default/${job}`)?.shape.workers ?? 0;
  for (let i = 0; i < n; i += 1) {
    wall += 10;
    for (let w = 0; w < workers; w += 1) {
      const r = speedRecord(job, w, wall, wall);
      c.handleMessage(r.topic, r.payload);
    }
  }
}

describe('Backend.reportJobs', () => {
  it('gets every job once per round: no progress before a fit, then progress and a prediction', async () => {
    const backend = new ReportingBackend();
    const { controller: c } = buildController({ backend, now: () => wall });
    await c.start();
    started.push(c);
    await c.submit(spec('a'));
    await c.submit(spec('b'));
    await c.roundNow('pre-run');
    expect(backend.reports).toHaveLength(1);
    expect(backend.reports[0]!.map((r) => [r.jobId, r.progress])).toEqual([
      ['default/a', null],
      ['default/b', null],
    ]);
    await c.settled(); // each sample's rollout takes steps, each after a round of its own
    for (let stage = 0; stage < 3; stage++) {
      feed(c, backend, 'a', 3);
      await c.roundNow('pre-run');
      await c.settled();
    }
    await c.roundNow('full');
    await c.settled();
    const last = backend.reports.at(-1)!.find((r) => r.jobId === 'default/a')!;
    const rounds = (await c.metrics.registry.getSingleMetricAsString('optimus_rounds_total')).match(
      / (\d+)$/m,
    );
    expect(backend.reports).toHaveLength(Number(rounds?.[1]));
    for (const r of backend.reports) expect(r.map((x) => x.jobId)).toEqual(['default/a', 'default/b']);
    expect(c.records()[0]?.phase).toBe('running');
    expect(last.phase).toBe('running');
    // The fake core's fit: 900 steps remain; the job has done `stepsDone` of them.
    const done = c.get('default/a')['observations'] as { stepsDone: number };
    expect(last.progress).toBeCloseTo(done.stepsDone / (done.stepsDone + 900));
    expect(last.predictedCompletionMs).toBeGreaterThan(wall);
    expect(last.models).toMatchObject({ convergence: { status: 'ok' } });
  });

  it('is optional: a backend without it runs rounds as before', async () => {
    const { controller: c } = buildController({ now: () => wall });
    await c.start();
    started.push(c);
    await c.submit(spec('a'));
    await expect(c.roundNow('pre-run')).resolves.toBeUndefined();
  });
});
