/**
 * The documented JSON is the served JSON: real controller answers parse with the schemas of the
 * OpenAPI document, with nothing left over (a field added to the view but not to the schema fails).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Controller } from '../runtime/controller';
import { buildController, speedRecord, testJobSpec } from '../runtime/testing';
import { jobViewSchema, whatIfSchema } from '../runtime/api-schemas';
import { createApp } from './app';

let wall = 1_000;
const started: Controller[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
});

async function runningController() {
  const built = buildController({ now: () => wall });
  await built.controller.start();
  started.push(built.controller);
  return built;
}

describe('API schemas against a real controller', () => {
  it('describe the job JSON and the what-if answer exactly, before and after fits', async () => {
    const { controller: c, backend } = await runningController();
    await c.submit(testJobSpec('a'));
    const check = () => {
      for (const v of c.list()) expect(jobViewSchema.parse(v)).toEqual(v);
      const w = c.whatIf('default/a', 2, 3);
      expect(whatIfSchema.parse(w)).toEqual(w);
    };
    check();
    await c.roundNow('pre-run');
    for (let i = 0; i < 4; i += 1) {
      const shape = backend.running.get('default/a')?.shape;
      for (let k = 0; k < 3; k += 1) {
        wall += 10;
        for (let w = 0; w < (shape?.workers ?? 0); w += 1) {
          const r = speedRecord('a', w, wall, wall);
          c.handleMessage(r.topic, r.payload);
        }
      }
      await c.roundNow('pre-run');
    }
    await c.roundNow('full');
    expect(c.list()[0]).toMatchObject({ phase: 'running', models: { convergence: { status: 'ok' } } });
    check();
    // Issue 30: the what-if said 70.01196003145854 s. Seconds to the ms, speeds to 4 digits, whole steps.
    const w = whatIfSchema.parse(c.whatIf('default/a', 2, 3));
    expect(w.fitted).toBe(true);
    for (const v of Object.values(w.predictedRemainingSec ?? {}))
      expect(String(v)).toMatch(/^\d+(\.\d{1,3})?$/);
    for (const v of Object.values(w.stepsPerSec)) expect(+v.toPrecision(4)).toBe(v);
    for (const v of Object.values(w.remainingSteps)) expect(Number.isInteger(v)).toBe(true);
  });

  it('what-if outside the job’s limits is answered and says so', async () => {
    const { controller: c } = await runningController();
    await c.submit(testJobSpec('a'));
    const app = createApp({ runtime: c });
    const inside = await (await app.request('/api/v1/what-if?ns=default&name=a&ps=2&workers=4')).json();
    expect(inside).toMatchObject({ withinLimits: true });
    expect(inside).not.toHaveProperty('note');
    const res = await app.request('/api/v1/what-if?ns=default&name=a&ps=9&workers=4');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      withinLimits: false,
      note: "9 PS is outside the job's limits 1–4: the scheduler never chooses this shape",
    });
  });

  it('refuses with 422 a job that can never fit, and keeps nothing of it', async () => {
    const { controller: c, backend } = await runningController();
    const app = createApp({ runtime: c });
    const body = {
      name: 'huge',
      batchSize: 64,
      stepsPerEpoch: 10,
      psDemand: { cpu: 1 },
      workerDemand: { cpu: 64 },
    };
    const res = await app.request('/api/v1/jobs', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: {
        status: 422,
        message:
          'job default/huge can never run: a worker needs cpu 64 cores, more than any server offers (largest: cpu 16 cores)',
      },
    });
    expect(c.list()).toEqual([]);
    expect(backend.admits).toEqual([]);
    const ok = await app.request('/api/v1/jobs', {
      method: 'POST',
      body: JSON.stringify({ ...body, name: 'fine', workerDemand: { cpu: 16 } }),
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.status).toBe(201);
  });
});
