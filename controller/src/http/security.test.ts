/**
 * The API's security promises (issue 28, ADR 0031), each checked: every route but the probes and the
 * dashboard's static shell needs the token, reads included — enumerated from the app's own route
 * table, so a route added later is checked without anyone remembering to; `/metrics` is open only
 * when configured; a DNS-rebinding Host and a cross-origin Origin are refused, over a real socket too.
 */
import http from 'node:http';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { History } from '../dashboard/history';
import { EventHub } from '../runtime/events';
import { createApp, PUBLIC_PATHS, type ApiRuntime } from './app';
import { hostAllowed } from './host-check';
import { listen, type RunningServer } from './serve';

const TOKEN = 'the-token';
const runtime: ApiRuntime = {
  ready: true,
  metrics: { registry: new Registry() },
  events: new EventHub(),
  list: () => [],
  get: () => ({}),
  submit: () => Promise.resolve({}),
  remove: () => Promise.resolve(),
  whatIf: () => ({}),
};
const source = {
  clock: { now: () => 100, wallMs: () => 1_000_000, scale: 20 },
  events: new EventHub(),
  list: () => [],
  records: () => [],
  whatIf: () => ({}),
  convergenceData: () => ({ lossPoints: [], estimate: null }),
  servers: () => Promise.resolve([]),
};
const build = (access: Parameters<typeof createApp>[0]['access'] = {}) =>
  createApp({
    runtime,
    token: TOKEN,
    access,
    dashboard: { source, history: new History(), assets: () => Promise.resolve({ js: '', css: '' }) },
  });

/** Every route of the app as a concrete request path. */
const routesOf = (app: ReturnType<typeof build>) =>
  [...new Set(app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`))].map(
    (key) => {
      const [method, path] = key.split(' ') as [string, string];
      return { method, path: path.replace(/:(\w+)/g, 'x') };
    },
  );

describe('API token on every route', () => {
  const app = build();
  const routes = routesOf(app);

  it('the route table holds what the README lists', () => {
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    for (const p of [
      'GET /api/v1/jobs',
      'GET /api/v1/events',
      'GET /api/v1/overview',
      'DELETE /api/v1/jobs/x/x',
    ])
      expect(paths).toContain(p);
  });

  it.each(routesOf(build()).filter((r) => !(PUBLIC_PATHS as readonly string[]).includes(r.path)))(
    '$method $path without the token: 401',
    async ({ method, path }) => {
      const res = await app.request(path, { method, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
      const wrong = await app.request(path, { method, headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
    },
  );

  it('only the probes and the dashboard shell answer without it', async () => {
    for (const path of ['/healthz', '/readyz', '/dashboard/', '/dashboard/app.js'])
      expect((await app.request(path)).status, path).toBeLessThan(400);
    const withToken = await app.request('/api/v1/jobs', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(withToken.status).toBe(200);
  });

  it('/metrics needs the token unless it is configured open', async () => {
    expect((await app.request('/metrics')).status).toBe(401);
    expect((await build({ metricsOpen: true }).request('/metrics')).status).toBe(200);
    expect((await build({ metricsOpen: true }).request('/api/v1/jobs')).status).toBe(401);
  });
});

describe('Host and Origin', () => {
  const app = build({ allowedHosts: ['localhost:8080'] });
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  it.each([
    ['POST', '/api/v1/jobs'],
    ['DELETE', '/api/v1/jobs/default/a'],
    ['GET', '/api/v1/jobs'],
  ])('a %s %s with Host: attacker.example is refused with 403, token or not', async (method, path) => {
    const res = await app.request(`http://attacker.example${path}`, {
      method,
      headers: { ...auth, host: 'attacker.example' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('attacker.example');
  });

  it.each([
    ['127.0.0.1:8080', true],
    ['[::1]:8080', true],
    ['localhost:8080', true],
    ['LOCALHOST:8080', true],
    ['localhost:9999', false],
    ['localhost.attacker.example:8080', false],
    ['attacker.example', false],
    ['127.0.0.1.nip.io:8080', false],
    ['', false],
  ])('Host %j allowed: %s', (host, ok) => {
    expect(hostAllowed(host, ['localhost:8080'])).toBe(ok);
  });

  it('a `.suffix` entry allows the name and every name under it, nothing else', () => {
    const allowed = ['.svc.cluster.local'];
    expect(hostAllowed('optimus.optimus-system.svc.cluster.local:8080', allowed)).toBe(true);
    expect(hostAllowed('svc.cluster.local', allowed)).toBe(true);
    expect(hostAllowed('evilsvc.cluster.local', allowed)).toBe(false);
  });

  it.each([
    ['another local port', 'http://127.0.0.1:3000', 403],
    ['a sandboxed page', 'null', 403],
    ['another site', 'https://attacker.example', 403],
    ['this very origin', 'http://localhost:8080', 200],
  ])('Origin from %s: %i', async (_n, origin, status) => {
    const res = await app.request('http://localhost:8080/api/v1/jobs', {
      headers: { ...auth, host: 'localhost:8080', origin },
    });
    expect(res.status).toBe(status);
  });
});

describe('over a real socket', () => {
  let server: RunningServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  /** node:http, because fetch may not set Host. */
  const request = (port: number, o: { method: string; path: string; host: string }) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: o.method,
          path: o.path,
          headers: { host: o.host, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(o.method === 'POST' ? '{}' : undefined);
    });

  it('a rebinding page’s POST and DELETE are refused; the real host is served', async () => {
    let app: ReturnType<typeof build> | null = null;
    server = await listen({ fetch: (r) => app!.fetch(r) }, 0);
    app = build({ allowedHosts: [`localhost:${server.port}`] });
    const port = server.port;
    expect(
      await request(port, { method: 'POST', path: '/api/v1/jobs', host: `attacker.example:${port}` }),
    ).toBe(403);
    expect(
      await request(port, { method: 'DELETE', path: '/api/v1/jobs/a/b', host: `attacker.example:${port}` }),
    ).toBe(403);
    expect(await request(port, { method: 'GET', path: '/api/v1/jobs', host: `localhost:${port}` })).toBe(200);
    expect(await request(port, { method: 'GET', path: '/api/v1/jobs', host: `127.0.0.1:${port}` })).toBe(200);
  });
});
