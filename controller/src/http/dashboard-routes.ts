/**
 * The web dashboard and the small read-only routes its pages need: an overview of every job
 * (queue position, waiting reason in words), the cluster view, and one job's history. Mounted by
 * `app.ts` when the composition root passes a dashboard.
 */
import { Hono } from 'hono';
import { clusterView } from '../dashboard/cluster-view';
import { dashboardAssets, FAVICON_SVG, INDEX_HTML, type DashboardAssets } from '../dashboard/assets';
import type { History } from '../dashboard/history';
import { jobDetail } from '../dashboard/job-detail';
import { overview } from '../dashboard/job-rows';
import { freeResources } from '../dashboard/shortage';
import type { DashboardSource } from '../dashboard/source';
import type { JobView, WhatIf } from '../runtime/api-schemas';
import { ApiError } from './errors';

export interface DashboardRoutesOptions {
  readonly source: DashboardSource;
  readonly history: History;
  /** The bundle (default: prebuilt or built on first use). */
  readonly assets?: () => Promise<DashboardAssets>;
}

/** Everything comes from this origin: the page works offline and loads nothing from elsewhere. */
const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'";

export function dashboardRoutes(o: DashboardRoutesOptions): Hono {
  const app = new Hono();
  const assets = o.assets ?? dashboardAssets;
  const { source, history } = o;
  const page = {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CSP,
    'cache-control': 'no-cache',
  };

  app.get('/', (c) => c.redirect('/dashboard/'));
  app.get('/dashboard', (c) => c.redirect('/dashboard/'));
  app.get('/dashboard/', (c) => c.body(INDEX_HTML, 200, page));
  app.get('/dashboard/app.js', async (c) =>
    c.body((await assets()).js, 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'no-cache',
    }),
  );
  app.get('/dashboard/app.css', async (c) =>
    c.body((await assets()).css, 200, {
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'no-cache',
    }),
  );

  const icon = { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=86400' };
  app.get('/dashboard/favicon.svg', (c) => c.body(FAVICON_SVG, 200, icon));

  app.get('/api/v1/overview', async (c) => {
    const servers = await source.servers();
    const records = source.records();
    const free = { free: freeResources(servers, records), capacity: clusterView(servers, [], []).capacity };
    return c.json(overview(source.list() as JobView[], records, source.clock, free));
  });
  app.get('/api/v1/cluster', async (c) =>
    c.json(clusterView(await source.servers(), source.records(), history.utilisation(), source.clock)),
  );
  app.get('/api/v1/jobs/:ns/:name/history', (c) => {
    const id = `${c.req.param('ns')}/${c.req.param('name')}`;
    const record = source.records().find((r) => `${r.spec.namespace}/${r.spec.name}` === id);
    if (!record) throw new ApiError(404, `job ${id} not found`);
    const { lossPoints, estimate } = source.convergenceData(id);
    const h = history.job(id);
    return c.json(
      jobDetail({
        view: source.list().find((v) => (v as JobView).id === id) as JobView,
        record,
        lossPoints,
        estimate,
        predictions: h.predictions,
        decisions: h.decisions,
        clock: source.clock,
        whatIf: (ps, workers) => source.whatIf(id, ps, workers) as WhatIf,
      }),
    );
  });
  return app;
}
