/**
 * The controller's HTTP API (Hono): health, metrics, jobs, what-if, and server-sent events.
 * Request → Response only; the runtime is passed in behind a small interface.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import type { Registry } from 'prom-client';
import type { RuntimeEvent } from '../runtime/events';
import { parseJobSpec, type JobSpec } from '../runtime/job-spec';
import { requireToken } from './auth';
import { checkHostAndOrigin, DEFAULT_ALLOWED_HOSTS } from './host-check';
import { requireJson } from './content-type';
import { dashboardRoutes, type DashboardRoutesOptions } from './dashboard-routes';
import { docsRoutes } from './docs-routes';
import { ApiError, errorResponse, onError } from './errors';

/** What the API needs from the runtime. */
export interface ApiRuntime {
  readonly ready: boolean;
  readonly metrics: { readonly registry: Registry };
  readonly events: { subscribe(fn: (e: RuntimeEvent) => void): () => void };
  list(): unknown[];
  get(id: string): unknown;
  submit(spec: JobSpec): Promise<unknown>;
  remove(id: string): Promise<void>;
  whatIf(id: string, ps: number, workers: number): unknown;
}

export interface AppOptions {
  readonly runtime: ApiRuntime;
  /**
   * When set, every route but {@link PUBLIC_PATHS} needs `Authorization: Bearer <token>` (401
   * otherwise, RFC 6750). The composition roots always set one unless told to run insecure.
   */
  readonly token?: string | undefined;
  /** Host/Origin checks and what may be read without the token (ADR 0031). */
  readonly access?: ApiAccess;
  readonly logError?: (err: Error) => void;
  /** Whether POST /api/v1/jobs is offered (local mode); Kubernetes users submit custom resources. */
  readonly allowSubmit?: boolean;
  /** The web dashboard and its read-only routes (`dashboard-routes.ts`), when the composition root runs one. */
  readonly dashboard?: DashboardRoutesOptions;
}

export interface ApiAccess {
  /** Names the API answers to besides IP literals (`name`, `name:port`, `.suffix`); default `localhost`. */
  readonly allowedHosts?: readonly string[];
  /** Serve `/metrics` without the token (for a Prometheus that has none). Default false. */
  readonly metricsOpen?: boolean;
}

/**
 * Open without the token: the probes, and the dashboard's shell — static code, the same for
 * everyone, holding no data. It must load before it can read its token from the link's fragment;
 * every request it then makes carries the token.
 */
export const PUBLIC_PATHS = [
  '/healthz',
  '/readyz',
  '/',
  '/dashboard',
  '/dashboard/',
  '/dashboard/app.js',
  '/dashboard/app.css',
  '/dashboard/favicon.svg',
] as const;

/** A job spec is a few hundred bytes; anything near this is a mistake or an attack. */
const MAX_BODY_BYTES = 64 * 1024;

/** Events buffered per SSE client; older ones are dropped (and counted) for a slow reader. */
export const MAX_QUEUED_EVENTS = 1000;

export function createApp(o: AppOptions): Hono {
  const app = new Hono();
  const rt = o.runtime;
  const open = new Set<string>(PUBLIC_PATHS);
  if (o.access?.metricsOpen) open.add('/metrics');
  const json = requireJson();
  app.onError((err, c) => onError(err, c, o.logError ?? (() => {})));
  app.use(checkHostAndOrigin(o.access?.allowedHosts ?? DEFAULT_ALLOWED_HOSTS));
  app.use(requireToken(o.token, (path) => open.has(path)));
  app.notFound((c) => errorResponse(c, 404, `no route for ${c.req.method} ${c.req.path}`));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', (c) => (rt.ready ? c.json({ status: 'ready' }) : errorResponse(c, 503, 'not ready')));
  app.get('/metrics', async (c) => {
    const text = await rt.metrics.registry.metrics();
    return c.text(text, 200, { 'content-type': rt.metrics.registry.contentType });
  });

  app.route('/', docsRoutes());
  if (o.dashboard) app.route('/', dashboardRoutes(o.dashboard));
  app.get('/api/v1/jobs', (c) => c.json({ jobs: rt.list() }));
  app.get('/api/v1/jobs/:ns/:name', (c) => c.json(rt.get(`${c.req.param('ns')}/${c.req.param('name')}`)));
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => errorResponse(c, 413, `request body larger than ${MAX_BODY_BYTES} bytes`),
  });
  app.post('/api/v1/jobs', json, limit, async (c) => {
    if (o.allowSubmit === false)
      throw new ApiError(405, 'submitting over the API is only offered in local mode');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new ApiError(400, 'request body is not valid JSON');
    }
    const parsed = parseJobSpec(body);
    if (!parsed.ok) throw new ApiError(400, `invalid job: ${parsed.error}`);
    return c.json(await rt.submit(parsed.spec), 201);
  });
  app.delete('/api/v1/jobs/:ns/:name', json, async (c) => {
    await rt.remove(`${c.req.param('ns')}/${c.req.param('name')}`);
    return c.json({ deleted: `${c.req.param('ns')}/${c.req.param('name')}` });
  });
  app.get('/api/v1/what-if', (c) => {
    const q = (k: string): string => {
      const v = c.req.query(k);
      if (v === undefined || v === '') throw new ApiError(400, `query parameter "${k}" is required`);
      return v;
    };
    const count = (k: string): number => {
      const n = Number(q(k));
      if (!Number.isInteger(n) || n < 1 || n > 10_000)
        throw new ApiError(400, `"${k}" must be an integer ≥ 1`);
      return n;
    };
    const id = `${q('ns')}/${q('name')}`;
    return c.json(rt.whatIf(id, count('ps'), count('workers')));
  });
  app.get('/api/v1/events', (c) =>
    streamSSE(c, async (stream) => {
      const queue: RuntimeEvent[] = [];
      let wake: (() => void) | null = null;
      let dropped = 0;
      const off = rt.events.subscribe((e) => {
        // A client that does not read must not grow our memory: keep the newest events only.
        if (queue.push(e) > MAX_QUEUED_EVENTS) {
          queue.shift();
          dropped += 1;
        }
        wake?.();
      });
      stream.onAbort(() => {
        off();
        wake?.();
      });
      await stream.writeSSE({ event: 'hello', data: JSON.stringify({ jobs: rt.list().length }) });
      while (!stream.aborted) {
        if (dropped > 0) {
          await stream.writeSSE({ event: 'dropped', data: JSON.stringify({ dropped }) });
          dropped = 0;
        }
        const e = queue.shift();
        if (e) await stream.writeSSE({ event: e.type, data: JSON.stringify(e) });
        else await new Promise<void>((r) => (wake = r));
        wake = null;
      }
      off();
    }),
  );
  return app;
}
