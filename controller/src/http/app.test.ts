import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { EventHub } from '../runtime/events';
import type { JobSpec } from '../runtime/job-spec';
import { createApp, MAX_QUEUED_EVENTS, type ApiRuntime } from './app';
import { listen, type RunningServer } from './serve';

class FakeRuntime implements ApiRuntime {
  ready = true;
  readonly metrics = { registry: new Registry() };
  readonly events = new EventHub();
  readonly jobs = new Map<string, JobSpec>();
  list() {
    return [...this.jobs.keys()].map((id) => ({ id }));
  }
  get(id: string) {
    if (!this.jobs.has(id)) throw Object.assign(new Error(`job ${id} not found`), { status: 404 });
    return { id };
  }
  async submit(spec: JobSpec) {
    this.jobs.set(`${spec.namespace}/${spec.name}`, spec);
    return { id: `${spec.namespace}/${spec.name}` };
  }
  async remove(id: string) {
    if (!this.jobs.delete(id)) throw Object.assign(new Error(`job ${id} not found`), { status: 404 });
  }
  whatIf(id: string, ps: number, workers: number) {
    this.get(id);
    return { id, ps, workers };
  }
}

const job = { name: 'a', batchSize: 64, stepsPerEpoch: 10, psDemand: { cpu: 1 }, workerDemand: { cpu: 1 } };
const post = (body: string, token?: string): RequestInit => ({
  method: 'POST',
  body,
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
});

describe('HTTP API (in process)', () => {
  const build = (token?: string) => {
    const rt = new FakeRuntime();
    return { rt, app: createApp({ runtime: rt, token }) };
  };

  it('answers health, readiness and metrics', async () => {
    const { rt, app } = build();
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(200);
    rt.ready = false;
    expect((await app.request('/readyz')).status).toBe(503);
    const m = await app.request('/metrics');
    expect(m.headers.get('content-type')).toContain('text/plain');
  });

  it('submits, lists, shows, what-ifs and deletes a job', async () => {
    const { app } = build('s3cret');
    expect((await app.request('/api/v1/jobs', post(JSON.stringify(job), 's3cret'))).status).toBe(201);
    const auth = { headers: { authorization: 'Bearer s3cret' } };
    expect(await (await app.request('/api/v1/jobs', auth)).json()).toEqual({ jobs: [{ id: 'default/a' }] });
    expect((await app.request('/api/v1/jobs/default/a', auth)).status).toBe(200);
    const w = await app.request('/api/v1/what-if?ns=default&name=a&ps=2&workers=3', auth);
    expect(await w.json()).toEqual({ id: 'default/a', ps: 2, workers: 3 });
    const del = await app.request('/api/v1/jobs/default/a', {
      method: 'DELETE',
      headers: { authorization: 'Bearer s3cret' },
    });
    expect(del.status).toBe(200);
  });

  it.each([
    ['bad JSON', () => post('{"name":', 't'), 400, /not valid JSON/],
    ['invalid job', () => post(JSON.stringify({ ...job, batchSize: -1 }), 't'), 400, /batchSize/],
    ['missing token', () => post(JSON.stringify(job)), 401, /missing bearer token/],
    ['wrong token', () => post(JSON.stringify(job), 'nope'), 401, /invalid bearer token/],
    ['a longer wrong token', () => post(JSON.stringify(job), 't'.repeat(64)), 401, /invalid bearer token/],
    ['huge body', () => post(JSON.stringify({ ...job, pad: 'x'.repeat(1 << 20) }), 't'), 413, /larger than/],
  ])('rejects %s with a JSON 4xx', async (_n, init, status, message) => {
    const { app } = build('t');
    const r = await app.request('/api/v1/jobs', init());
    expect(r.status).toBe(status);
    const body = (await r.json()) as { error: { message: string; status: number } };
    expect(body.error.status).toBe(status);
    expect(body.error.message).toMatch(message);
  });

  it.each([
    ['missing', undefined],
    ['wrong', 'nope'],
  ])('answers a %s token with 401 and WWW-Authenticate: Bearer error="invalid_token"', async (_n, token) => {
    const { app, rt } = build('t');
    const r = await app.request('/api/v1/jobs', post(JSON.stringify(job), token));
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    const d = await app.request('/api/v1/jobs/default/a', {
      method: 'DELETE',
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    expect(d.status).toBe(401);
    expect(rt.list()).toHaveLength(0);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['*/*', '*/*'],
    ['no content type', undefined],
    ['json look-alike', 'application/jsonp'],
  ])('refuses a job sent as %s with 415 (no CORS-simple request can create jobs)', async (_n, type) => {
    const { app, rt } = build();
    const r = await app.request('/api/v1/jobs', {
      method: 'POST',
      headers: type === undefined ? {} : { 'content-type': type },
      body: JSON.stringify(job),
    });
    expect(r.status).toBe(415);
    expect(((await r.json()) as { error: { status: number } }).error.status).toBe(415);
    expect(rt.list()).toHaveLength(0);
  });

  it('accepts application/json with a charset, and a DELETE without a body', async () => {
    const { app } = build();
    const r = await app.request('/api/v1/jobs', {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body: JSON.stringify(job),
    });
    expect(r.status).toBe(201);
    expect((await app.request('/api/v1/jobs/default/a', { method: 'DELETE' })).status).toBe(200);
    const plain = await app.request('/api/v1/jobs/default/a', {
      method: 'DELETE',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(plain.status).toBe(415);
  });

  it.each([
    ['unknown job', '/api/v1/jobs/default/nope', 404],
    ['unknown route', '/api/v2/x', 404],
    ['what-if without ps', '/api/v1/what-if?ns=default&name=a&workers=1', 400],
    ['what-if bad workers', '/api/v1/what-if?ns=default&name=a&ps=1&workers=0', 400],
    ['what-if unknown job', '/api/v1/what-if?ns=default&name=zz&ps=1&workers=1', 404],
  ])('answers %s with a JSON error', async (_n, path, status) => {
    const { app } = build();
    const r = await app.request(path);
    expect(r.status).toBe(status);
    expect(((await r.json()) as { error: { status: number } }).error.status).toBe(status);
  });

  it('hides internal errors behind a bare 500', async () => {
    const { rt, app } = build();
    rt.list = () => {
      throw new Error('secret internals at /x/y.ts:1');
    };
    const r = await app.request('/api/v1/jobs');
    expect(r.status).toBe(500);
    expect(await r.text()).not.toContain('secret');
  });
});

describe('HTTP API (real socket)', () => {
  let server: RunningServer | undefined;
  afterEach(async () => server?.close());

  it('serves requests and streams events', async () => {
    const rt = new FakeRuntime();
    server = await listen(createApp({ runtime: rt }), 0);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const res = await fetch(`${server.url}/api/v1/events`);
    const reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: hello');
    rt.events.emit({ type: 'job', id: 'default/a', phase: 'running', ts: 1 });
    let text = '';
    while (!text.includes('event: job')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('"phase":"running"');
    await reader.cancel();
  });
});

describe('HTTP API event stream', () => {
  it('keeps only the newest events for a client that falls behind, and says how many it dropped', async () => {
    const rt = new FakeRuntime();
    const res = await createApp({ runtime: rt }).request('/api/v1/events');
    const reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    // Emitted synchronously: the stream cannot send any of them before all are queued.
    for (let i = 0; i < MAX_QUEUED_EVENTS + 500; i += 1)
      rt.events.emit({ type: 'job', id: `default/j${i}`, phase: 'running', ts: i });
    while (!text.includes('default/j1499')) text += decoder.decode((await reader.read()).value);
    expect(text).toContain('event: dropped\ndata: {"dropped":500}');
    expect(text).not.toContain('"default/j499"');
    expect(text).toContain('"default/j500"');
    await reader.cancel();
  });
});
