import { afterEach, describe, expect, it } from 'vitest';
import type { Controller } from './controller';
import { convergenceR2, pendingReason, PENDING_REASONS } from './job-metrics';
import { buildController, speedRecord, testJobSpec } from './testing';

let wall = 1_000;
const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

/** One sample per series line: `name{labels} value`. */
function series(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const [labels, value] = [
      line.slice(name.length, line.lastIndexOf(' ')),
      line.slice(line.lastIndexOf(' ') + 1),
    ];
    out.set(labels, Number(value));
  }
  return out;
}

describe('per-job metrics', () => {
  it('exports shape, progress, remaining time, restarts, pending reason and fit quality per job', async () => {
    const built = buildController({ now: () => wall });
    const { controller: c, backend } = built;
    await c.start();
    started.push(c);
    await c.submit(testJobSpec('a'));
    await c.submit(testJobSpec('b'));
    let text = await c.metrics.registry.metrics();
    // Before any round: both wait for their pre-run, nothing runs.
    expect(series(text, 'optimus_job_pending')).toEqual(
      new Map([
        ['{job_namespace="default",job_name="a",reason="new"}', 1],
        ['{job_namespace="default",job_name="b",reason="new"}', 1],
      ]),
    );
    expect(
      series(text, 'optimus_job_phase').get('{job_namespace="default",job_name="a",phase="pending"}'),
    ).toBe(1);
    await c.roundNow('pre-run');
    await c.settled();
    // The fake core's pre-run runs 3 sample shapes; feed records until it is over, then decide.
    for (let i = 0; i < 4; i += 1) {
      for (const id of ['a', 'b']) {
        const shape = backend.running.get(`default/${id}`)?.shape;
        for (let k = 0; k < 3; k += 1) {
          wall += 10;
          for (let w = 0; w < (shape?.workers ?? 0); w += 1) {
            const r = speedRecord(id, w, wall, wall);
            c.handleMessage(r.topic, r.payload);
          }
        }
      }
      await c.roundNow('pre-run');
      await c.settled();
    }
    await c.roundNow('full');
    await c.settled();
    text = await c.metrics.registry.metrics();
    const a = '{job_namespace="default",job_name="a"}';
    expect(series(text, 'optimus_job_ps').get(a)).toBe(2);
    expect(series(text, 'optimus_job_workers').get(a)).toBe(2);
    expect(series(text, 'optimus_job_restarts').get(a)).toBe(c.records()[0]!.restarts);
    const progress = series(text, 'optimus_job_progress_ratio').get(a)!;
    expect(progress).toBeGreaterThan(0);
    expect(progress).toBeLessThan(1);
    const remaining = series(text, 'optimus_job_predicted_remaining_seconds');
    const [value, lower, upper] = ['value', 'lower', 'upper'].map((b) =>
      remaining.get(`{job_namespace="default",job_name="a",bound="${b}"}`)!,
    );
    expect(lower).toBeLessThanOrEqual(value!);
    expect(value).toBeLessThanOrEqual(upper!);
    expect(value).toBeCloseTo(
      (c.get('default/a').plan as { predictedRemainingSec: { value: number } }).predictedRemainingSec.value,
    );
    // The fake core's interval is 400 steps wide around its prediction.
    const fit = (c.get('default/a').models as { convergence: { predictedTotalSteps: number } }).convergence;
    expect(
      series(text, 'optimus_job_interval_relative_width').get(
        '{job_namespace="default",job_name="a",model="convergence"}',
      ),
    ).toBeCloseTo(400 / fit.predictedTotalSteps);
    expect(
      series(text, 'optimus_job_fit_r_squared').has(
        '{job_namespace="default",job_name="a",model="convergence"}',
      ),
    ).toBe(true);
    expect(series(text, 'optimus_job_pending').size).toBe(0);
  });

  it('a job mid-rollout is resizing with the shape it gets, never pending "new" (issue 30)', async () => {
    const { controller: c, backend } = buildController({ now: () => wall });
    await c.start();
    started.push(c);
    await c.submit(testJobSpec('r'));
    backend.hang.add('default/r'); // its start never returns: tasks checkpointing and restarting
    await c.roundNow('pre-run');
    const r = '{job_namespace="default",job_name="r"}';
    let text = await c.metrics.registry.metrics();
    expect(
      series(text, 'optimus_job_phase').get('{job_namespace="default",job_name="r",phase="resizing"}'),
    ).toBe(1);
    expect(series(text, 'optimus_jobs').get('{phase="resizing"}')).toBe(1);
    expect(series(text, 'optimus_jobs').get('{phase="pending"}')).toBe(0);
    expect(series(text, 'optimus_job_pending').size).toBe(0);
    // The fake core's first pre-run sample is 1 × 1: what the rollout gives it.
    expect([series(text, 'optimus_job_ps').get(r), series(text, 'optimus_job_workers').get(r)]).toEqual([
      1, 1,
    ]);
    expect(c.get('default/r')['state']).toBe('resizing');
    backend.hang.delete('default/r');
    backend.release(); // that step fails; the rollout stays in flight and its next step starts the tasks
    await c.settled();
    await c.roundNow('pre-run');
    await c.settled();
    text = await c.metrics.registry.metrics();
    expect(series(text, 'optimus_jobs').get('{phase="resizing"}')).toBe(0);
    expect(c.get('default/r')['state']).not.toBe('resizing');
  });

  it('counts restarts as a _total counter and each first start in the admission-wait histogram', async () => {
    const { controller: c } = buildController({ now: () => wall });
    await c.start();
    started.push(c);
    await c.submit(testJobSpec('h1'));
    wall += 3000; // 30 job seconds later (scale 10)
    await c.submit(testJobSpec('h2'));
    wall += 1000;
    await c.roundNow('pre-run');
    await c.settled();
    await c.roundNow('pre-run'); // observed after the round that saw them start
    const text = await c.metrics.registry.metrics();
    expect(text).toContain('# TYPE optimus_job_restarts_total counter');
    expect(series(text, 'optimus_job_restarts_total').get('{job_namespace="default",job_name="h1"}')).toBe(
      c.records()[0]!.restarts,
    );
    const count = Number(/^optimus_admission_wait_seconds_count (\S+)$/m.exec(text)?.[1]);
    const sum = Number(/^optimus_admission_wait_seconds_sum (\S+)$/m.exec(text)?.[1]);
    expect(count).toBe(2);
    // h1 waited 40 job s, h2 10 job s: submission → the start the first round dispatched.
    expect(sum).toBeCloseTo(50, 0);
    await c.roundNow('pre-run');
    expect(
      /^optimus_admission_wait_seconds_count (\S+)$/m.exec(await c.metrics.registry.metrics())?.[1],
    ).toBe('2');
  });

  it('drops a removed job from every series', async () => {
    const { controller: c } = buildController({ now: () => wall });
    await c.start();
    started.push(c);
    await c.submit(testJobSpec('gone'));
    expect(await c.metrics.registry.metrics()).toContain('job_name="gone"');
    await c.remove('default/gone');
    expect(await c.metrics.registry.metrics()).not.toContain('job_name="gone"');
  });
});

describe('pendingReason', () => {
  it.each([
    [null, 'new'],
    ['waiting for room to pre-run', 'pre-run-room'],
    ['minimum shape 1 PS + 1 worker does not fit', 'does-not-fit'],
    ['no server can hold every task of 1 PS + 2 workers', 'does-not-fit'],
    ['queued behind default/x (FIFO)', 'queued'],
    ['needs a resource that no server offers', 'resource-missing'],
    ['invalid job: maxPs < minPs', 'invalid'],
    ['something new', 'other'],
  ] as const)('%s → %s', (reason, want) => {
    expect(pendingReason(reason)).toBe(want);
    expect(PENDING_REASONS).toContain(want);
  });
});

describe('convergenceR2', () => {
  const beta = { beta: [0.01, 1, 0.1] as const };
  const curve = (k: number) => 1 / (0.01 * k + 1) + 0.1;
  it('is 1 on the curve itself and lower with noise', () => {
    const exact = Array.from({ length: 50 }, (_, i) => ({ step: i * 10, loss: curve(i * 10) }));
    expect(convergenceR2(exact, beta)).toBeCloseTo(1, 10);
    const noisy = exact.map((p, i) => ({ ...p, loss: p.loss * (i % 2 ? 1.05 : 0.95) }));
    const r2 = convergenceR2(noisy, beta)!;
    expect(r2).toBeLessThan(1);
    expect(r2).toBeGreaterThan(0.8);
  });
  it('only judges the fitted segment and needs three points', () => {
    const pts = [{ step: 0, loss: 99 }, ...[100, 110, 120].map((s) => ({ step: s, loss: curve(s - 100) }))];
    expect(convergenceR2(pts, beta, 100)).toBeCloseTo(1, 10);
    expect(convergenceR2(pts.slice(0, 3), beta, 100)).toBeNull();
  });
  it('judges the exponential when it gave the prediction', () => {
    const exponential = { a: 0.9, r: 0.02, c: 0.1 };
    const pts = Array.from({ length: 30 }, (_, i) => ({
      step: i * 10,
      loss: 0.9 * Math.exp(-0.2 * i) + 0.1,
    }));
    expect(convergenceR2(pts, { ...beta, exponential })).toBeCloseTo(1, 10);
    expect(convergenceR2(pts, beta)!).toBeLessThan(0.9);
  });
});
