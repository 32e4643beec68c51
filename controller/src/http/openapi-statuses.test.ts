/**
 * Every status a route answers is in the OpenAPI document under that route, and every answer parses
 * with the documented schema exactly: real requests against the real app over a real controller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { History } from '../dashboard/history';
import { bindSource } from '../dashboard/bind-source';
import { clusterViewSchema, errorSchema, jobDetailSchema, overviewSchema } from '../runtime/api-schemas';
import { buildController } from '../runtime/testing';
import { createApp } from './app';
import { openApiDocument } from './openapi';

const TOKEN = 's3cret';
const built = buildController();
const { controller } = built;
const app = createApp({
  runtime: controller,
  token: TOKEN,
  dashboard: { source: bindSource(controller, async () => built.backend.servers), history: new History() },
});
const kubernetesApp = createApp({ runtime: controller, token: TOKEN, allowSubmit: false });
beforeAll(async () => {
  await controller.start();
});
afterAll(async () => {
  await controller.stop();
});

const job = { name: 'a', batchSize: 64, stepsPerEpoch: 10, psDemand: { cpu: 1 }, workerDemand: { cpu: 1 } };
const auth = { authorization: `Bearer ${TOKEN}` };
const asJson = { 'content-type': 'application/json', ...auth };

interface Call {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  /** Default: the bearer token only (every route but the probes needs it, reads included). */
  readonly init?: RequestInit;
  readonly status: number;
  readonly on?: typeof app;
}

/** In order: the later ones rely on the job the first POST creates. */
const calls: Call[] = [
  { name: 'liveness', method: 'GET', path: '/healthz', status: 200 },
  { name: 'readiness', method: 'GET', path: '/readyz', status: 200 },
  { name: 'metrics', method: 'GET', path: '/metrics', status: 200 },
  {
    name: 'submit',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: JSON.stringify(job), headers: asJson },
    status: 201,
  },
  {
    name: 'submit again',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: JSON.stringify(job), headers: asJson },
    status: 409,
  },
  {
    name: 'submit, no token',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: '{}', headers: { 'content-type': 'application/json' } },
    status: 401,
  },
  {
    name: 'submit, wrong type',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: '{}', headers: { 'content-type': 'text/plain', ...auth } },
    status: 415,
  },
  {
    name: 'submit, not JSON',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: '{', headers: asJson },
    status: 400,
  },
  {
    name: 'submit, too large',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: `"${'x'.repeat(70_000)}"`, headers: asJson },
    status: 413,
  },
  {
    name: 'submit, never fits',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: JSON.stringify({ ...job, name: 'huge', workerDemand: { cpu: 999 } }), headers: asJson },
    status: 422,
  },
  {
    name: 'submit in Kubernetes mode',
    method: 'POST',
    path: '/api/v1/jobs',
    init: { body: JSON.stringify(job), headers: asJson },
    status: 405,
    on: kubernetesApp,
  },
  { name: 'list', method: 'GET', path: '/api/v1/jobs', status: 200 },
  { name: 'list, no token', method: 'GET', path: '/api/v1/jobs', init: {}, status: 401 },
  { name: 'metrics, no token', method: 'GET', path: '/metrics', init: {}, status: 401 },
  { name: 'one job', method: 'GET', path: '/api/v1/jobs/default/a', status: 200 },
  { name: 'no such job', method: 'GET', path: '/api/v1/jobs/default/nope', status: 404 },
  { name: 'what-if', method: 'GET', path: '/api/v1/what-if?ns=default&name=a&ps=2&workers=2', status: 200 },
  {
    name: 'what-if, bad count',
    method: 'GET',
    path: '/api/v1/what-if?ns=default&name=a&ps=0&workers=2',
    status: 400,
  },
  {
    name: 'what-if, no such job',
    method: 'GET',
    path: '/api/v1/what-if?ns=default&name=zz&ps=1&workers=1',
    status: 404,
  },
  { name: 'overview', method: 'GET', path: '/api/v1/overview', status: 200 },
  { name: 'cluster', method: 'GET', path: '/api/v1/cluster', status: 200 },
  { name: 'history', method: 'GET', path: '/api/v1/jobs/default/a/history', status: 200 },
  { name: 'history, no such job', method: 'GET', path: '/api/v1/jobs/default/nope/history', status: 404 },
  { name: 'document', method: 'GET', path: '/api/v1/openapi.json', status: 200 },
  { name: 'events', method: 'GET', path: '/api/v1/events', status: 200 },
  {
    name: 'delete, body of another type',
    method: 'DELETE',
    path: '/api/v1/jobs/default/a',
    init: { body: 'x', headers: { 'content-type': 'text/plain', ...auth } },
    status: 415,
  },
  { name: 'delete, no token', method: 'DELETE', path: '/api/v1/jobs/default/a', init: {}, status: 401 },
  { name: 'delete', method: 'DELETE', path: '/api/v1/jobs/default/a', init: { headers: auth }, status: 200 },
  {
    name: 'delete, no such job',
    method: 'DELETE',
    path: '/api/v1/jobs/default/a',
    init: { headers: auth },
    status: 404,
  },
];

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

/** The documented path a concrete path matches (`/api/v1/jobs/default/a` → `/api/v1/jobs/{ns}/{name}`). */
function template(doc: Doc, path: string): string | undefined {
  const bare = path.split('?')[0]!;
  return Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{\w+\}/g, '[^/]+')}$`).test(bare));
}

const schemaOf: Record<string, { parse(x: unknown): unknown }> = {
  '/api/v1/overview': overviewSchema,
  '/api/v1/cluster': clusterViewSchema,
  '/api/v1/jobs/{ns}/{name}/history': jobDetailSchema,
};

describe('every status a route answers is documented for it (issue 30: 415 was not)', () => {
  const doc = openApiDocument() as Doc;
  for (const c of calls)
    it(`${c.name}: ${c.method} ${c.path.slice(0, 60)} → ${c.status}`, async () => {
      const init = c.init ?? { headers: auth };
      const res = await (c.on ?? app).request(c.path, { method: c.method, ...init });
      expect(res.status).toBe(c.status);
      const t = template(doc, c.path);
      expect(t, `${c.path} is documented`).toBeDefined();
      expect(Object.keys(doc.paths[t!]![c.method.toLowerCase()]!.responses)).toContain(String(c.status));
      if (c.path === '/api/v1/events') return void (await res.body?.cancel());
      const body: unknown = res.headers.get('content-type')?.includes('json')
        ? await res.json()
        : await res.text();
      if (c.status >= 400) expect(errorSchema.parse(body)).toEqual(body);
      const schema = schemaOf[t!];
      if (schema && c.status === 200) expect(schema.parse(body)).toEqual(body);
    });
});

describe('the document is complete for client generators', () => {
  const doc = openApiDocument() as Doc & {
    servers?: { url: string }[];
    security?: unknown[];
    components: { securitySchemes?: Record<string, { type: string; scheme: string }> };
  };
  const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      path,
      method,
      op: op as { operationId?: string; security?: unknown[] },
    })),
  );

  it('has a unique operationId on every operation', () => {
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('asks for the bearer token everywhere but liveness and readiness, and names a server', () => {
    expect(doc.components.securitySchemes?.['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const open = ops.filter((o) => o.op.security !== undefined).map((o) => `${o.method} ${o.path}`);
    expect(open.sort()).toEqual(['get /healthz', 'get /readyz']);
    for (const o of ops.filter((x) => x.op.security === undefined))
      expect(Object.keys((o.op as unknown as { responses: object }).responses)).toContain('401');
    expect(doc.servers?.[0]?.url).toBe('http://127.0.0.1:8080');
  });
});
