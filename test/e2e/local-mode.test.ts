/**
 * End to end: the local mode runs a small workload to completion — real trainer processes,
 * real sidecar bundles, the embedded broker, the controller with the real models and policy.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMALL_WORKLOAD } from '../../controller/src/local/demo-workload';
import { startLocal, type LocalRun } from '../../controller/src/local/run-local';
import type { RunSummary } from '../../controller/src/local/summary';
import { PRE_RUN_DEFAULTS } from '../../controller/src/runtime/pre-run';
import type { JobModels } from '../../controller/src/runtime/refit';
import type { JobPlan } from '../../shared/src/schemas';
import { retainedPlans, until } from './helpers';

describe('local mode end to end', () => {
  let dir = '';
  let run: LocalRun;
  let summary: RunSummary;
  let midRunPlansMatched = false;
  const models = new Map<string, JobModels | null>();
  const auth = () => ({ headers: { authorization: `Bearer ${run.apiToken}` } });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'optimus-e2e-'));
    run = await startLocal({
      stateDir: dir,
      workload: SMALL_WORKLOAD,
      timeScale: 30,
      schedulingIntervalSec: 120,
      restartCostSec: 20,
      policy: 'optimus',
      httpPort: 0,
      logLevel: 'warn',
    });
    // Mid-run: once the policy has decided for jobs past their pre-run, the retained plans must
    // carry exactly the shapes that run. Rounds may land between the two reads: retry a few times.
    await until(
      'a scheduled running job',
      () => run.controller.list().some((j) => j['phase'] === 'running' && j['shape'] !== null),
      60_000,
    );
    for (let i = 0; i < 10 && !midRunPlansMatched; i += 1) {
      const plans = await retainedPlans(run.brokerUrl, run.brokerObserver);
      midRunPlansMatched = run.controller.list().every((j) => {
        const p = plans.get(String(j['id']));
        const shape = j['shape'] as { ps: number; workers: number } | null;
        return p !== undefined && p.ps === (shape?.ps ?? 0) && p.workers === (shape?.workers ?? 0);
      });
    }
    await until(
      'all jobs done',
      () => run.controller.allDone() && run.controller.records().length === SMALL_WORKLOAD.length,
      150_000,
    );
    summary = run.summary();
    for (const r of run.controller.records())
      models.set(r.spec.name, run.controller.modelsOf(`${r.spec.namespace}/${r.spec.name}`));
  }, 240_000);

  afterAll(async () => {
    await run?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('completes every job of the workload', () => {
    expect(summary.jobs.map((j) => j.name).sort()).toEqual(SMALL_WORKLOAD.map((j) => j.spec.name).sort());
    for (const j of summary.jobs) expect(j.jct).toBeGreaterThan(0);
    expect(summary.avgJct).toBeGreaterThan(0);
  });

  it('received every record the sidecars sent, task by task', () => {
    const tasks = Object.entries(summary.perTask);
    expect(tasks.length).toBeGreaterThanOrEqual(SMALL_WORKLOAD.length);
    // A worker stopped before its first Speedometer line legitimately sent nothing.
    for (const [task, c] of tasks) expect({ task, received: c.received }).toEqual({ task, received: c.sent });
    expect(tasks.reduce((a, [, c]) => a + c.sent, 0)).toBe(summary.messages.received);
    expect(summary.messages.lost).toBe(0);
    expect(summary.messages.rejected).toBe(0);
  });

  it('fitted a convergence model while the jobs ran, and the policy resized a job past its pre-run samples', () => {
    const records = run.controller.records();
    // A job's convergence model was fitted on what its sidecars logged (a job this short may end
    // before its loss history has enough points: not every job gets there).
    expect(
      [...models.values()].some((m) => m?.convergence.status === 'ok'),
      JSON.stringify([...models].map(([k, m]) => [k, m?.convergence.status, m?.speedFitted])),
    ).toBe(true);
    // After its pre-run samples (PRE_RUN_DEFAULTS.budget shapes) a job ran a shape the policy chose
    // from the models fitted on them.
    expect(records.some((r) => r.spans.length > PRE_RUN_DEFAULTS.budget)).toBe(true);
  });

  it('keeps the retained plan topics in step with the decisions', async () => {
    expect(midRunPlansMatched).toBe(true);
    // Plans are published without waiting for the broker (an outage must not stall rounds), so the
    // retained topics catch up with the last decisions a moment after the jobs finish.
    let plans = new Map<string, JobPlan>();
    const settled = () =>
      run.controller
        .records()
        .every((r) => plans.get(`${r.spec.namespace}/${r.spec.name}`)?.state === 'done');
    await until(
      'retained plans of the finished jobs',
      async () => settled() || ((plans = await retainedPlans(run.brokerUrl, run.brokerObserver)), settled()),
      10_000,
    ).catch(() => undefined); // the assertions below say what differs
    for (const r of run.controller.records()) {
      expect(plans.get(`${r.spec.namespace}/${r.spec.name}`)).toMatchObject({
        state: 'done',
        ps: 0,
        workers: 0,
        remainingSteps: 0,
      });
    }
  });

  it('serves the jobs and the metrics over HTTP', async () => {
    const jobs = (await (await fetch(`${run.http.url}/api/v1/jobs`, auth())).json()) as {
      jobs: { phase: string }[];
    };
    expect(jobs.jobs.map((j) => j.phase)).toEqual(SMALL_WORKLOAD.map(() => 'done'));
    const metrics = await (await fetch(`${run.http.url}/metrics`, auth())).text();
    expect(metrics).toContain(`optimus_messages_received_total ${summary.messages.received}`);
    expect(metrics).toContain('optimus_jobs{phase="done"} 3');
    const stored = readFileSync(join(dir, 'store', 'records.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(stored).toHaveLength(summary.messages.received);
  });
});
