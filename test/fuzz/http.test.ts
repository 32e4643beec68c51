/**
 * Property-based fuzzing of the HTTP API's decoders (method, path, content type, token, body): the
 * answer is always a deliberate status with a JSON error body (never a 500), and a job is created only
 * by an authenticated `application/json` POST of a valid spec.
 */
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createApp, type ApiRuntime } from '../../controller/src/http/app';
import { EventHub } from '../../controller/src/runtime/events';
import { parseJobSpec, type JobSpec } from '../../controller/src/runtime/job-spec';
import { RUNS } from './runs';

class MemoryRuntime implements ApiRuntime {
  ready = true;
  readonly metrics = { registry: new Registry() };
  readonly events = new EventHub();
  readonly jobs = new Map<string, JobSpec>();
  list = () => [...this.jobs.keys()].map((id) => ({ id }));
  get = (id: string) => {
    if (!this.jobs.has(id)) throw Object.assign(new Error(`job ${id} not found`), { status: 404 });
    return { id };
  };
  submit = async (spec: JobSpec) => {
    const id = `${spec.namespace}/${spec.name}`;
    if (this.jobs.has(id)) throw Object.assign(new Error('exists'), { status: 409 });
    this.jobs.set(id, spec);
    return { id };
  };
  remove = async (id: string) => {
    if (!this.jobs.delete(id)) throw Object.assign(new Error(`job ${id} not found`), { status: 404 });
  };
  whatIf = (id: string, ps: number, workers: number) => (this.get(id), { id, ps, workers });
}

const TOKEN = 'the-token';
const job = { name: 'a', batchSize: 64, stepsPerEpoch: 10, psDemand: { cpu: 1 }, workerDemand: { cpu: 1 } };
const body = fc.oneof(
  fc.constant(JSON.stringify(job)),
  fc.jsonValue().map((j) => JSON.stringify(j) ?? ''),
  fc
    .record({ name: fc.string({ maxLength: 70 }), batchSize: fc.oneof(fc.integer(), fc.double()) })
    .map((j) => JSON.stringify({ ...job, ...j })),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
);
const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '*/*',
    '',
  ),
  fc.string({ maxLength: 40 }).filter((s) => !/[\r\n\0]/.test(s)),
);
const auth = fc.constantFrom(
  `Bearer ${TOKEN}`,
  'Bearer nope',
  `Bearer ${TOKEN}x`,
  'Basic abc',
  '',
  `bearer ${TOKEN}`,
);
const path = fc.oneof(
  fc.constantFrom(
    '/api/v1/jobs',
    '/api/v1/jobs/default/a',
    '/api/v1/what-if?ns=default&name=a&ps=1&workers=2',
    '/healthz',
    '/readyz',
    '/metrics',
  ),
  fc.string({ maxLength: 30 }).map((s) => `/api/v1/${encodeURIComponent(s)}`),
);
const DELIBERATE = new Set([200, 201, 400, 401, 404, 405, 409, 413, 415]);

describe('HTTP API decoders (controller/src/http)', () => {
  it('answers every request deliberately, never 500; creates a job only when it must', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH'),
        path,
        contentType,
        auth,
        body,
        async (method, p, type, authorization, b) => {
          const rt = new MemoryRuntime();
          const app = createApp({ runtime: rt, token: TOKEN });
          const headers: Record<string, string> = {};
          if (type !== '') headers['content-type'] = type;
          if (authorization !== '') headers['authorization'] = authorization;
          const res = await app.request(p, { method, headers, ...(method === 'GET' ? {} : { body: b }) });
          expect(DELIBERATE.has(res.status), `${method} ${p} → ${res.status}`).toBe(true);
          if (res.status >= 400 && p.startsWith('/api/')) {
            const e = (await res.json()) as { error: { status: number } };
            expect(e.error.status).toBe(res.status);
          }
          const created = rt.jobs.size > 0;
          const should =
            method === 'POST' &&
            p === '/api/v1/jobs' &&
            /^application\/json\s*(;|$)/i.test(type) &&
            /^bearer\s+the-token$/i.test(authorization) &&
            (() => {
              try {
                return parseJobSpec(JSON.parse(b)).ok;
              } catch {
                return false;
              }
            })();
          expect(created).toBe(should);
        },
      ),
      { numRuns: RUNS.httpRequests },
    );
  });
});
