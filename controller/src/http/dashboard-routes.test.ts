/** The dashboard's routes in process: the page, its offline bundle, and the read-only data routes. */
import { describe, expect, it } from 'vitest';
import { History } from '../dashboard/history';
import { EventHub } from '../runtime/events';
import { newJobRecord } from '../runtime/job-record';
import { testJobSpec } from '../runtime/testing';
import { dashboardRoutes } from './dashboard-routes';

const record = {
  ...newJobRecord(testJobSpec('a'), 0),
  inFlight: false,
  current: {
    shape: { ps: 1, workers: 2 },
    placement: [
      { role: 'ps' as const, index: 0, server: 'node-a' },
      { role: 'worker' as const, index: 0, server: 'node-a' },
      { role: 'worker' as const, index: 1, server: 'node-b' },
    ],
  },
  phase: 'running' as const,
};

const source = {
  clock: { now: () => 100, wallMs: () => 1_000_000, scale: 20 },
  events: new EventHub(),
  list: () => [],
  records: () => [record],
  whatIf: () => ({}),
  convergenceData: () => ({ lossPoints: [], estimate: null }),
  servers: async () => [
    { name: 'node-a', capacity: { cpu: 8 }, reserved: { cpu: 1 } },
    { name: 'node-b', capacity: { cpu: 8 }, reserved: {} },
  ],
};

describe('dashboard routes', () => {
  const app = dashboardRoutes({ source, history: new History() });

  it('serve the page with a policy that forbids loading anything from elsewhere', async () => {
    expect((await app.request('/')).headers.get('location')).toBe('/dashboard/');
    const res = await app.request('/dashboard/');
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self'/);
    const html = await res.text();
    expect(html).toContain('<script src="app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('serve a self-contained bundle: uPlot inside, nothing fetched from a CDN', async () => {
    const js = await (await app.request('/dashboard/app.js')).text();
    const css = await (await app.request('/dashboard/app.css')).text();
    expect(js.length).toBeGreaterThan(20_000);
    expect(js).toContain('uplot');
    expect(css).toContain('.uplot');
    // The only absolute URLs are XML namespaces (SVG), which are names, not downloads.
    const urls = [...`${js}${css}`.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]);
    expect(urls.filter((u) => !u.startsWith('http://www.w3.org/'))).toEqual([]);
    expect(`${js}${css}`).not.toMatch(/@import|fonts\.googleapis|cdn\./);
  }, 30_000);

  it('place every task on its server, with what it holds', async () => {
    const c = (await (await app.request('/api/v1/cluster')).json()) as {
      servers: {
        name: string;
        used: Record<string, number>;
        tasks: { job: string; role: string; index: number }[];
      }[];
      capacity: Record<string, number>;
      used: Record<string, number>;
      reserved: Record<string, number>;
    };
    expect(c.servers.map((s) => [s.name, s.used, s.tasks.map((t) => `${t.role}${t.index}`)])).toEqual([
      ['node-a', { cpu: 2 }, ['ps0', 'worker0']],
      ['node-b', { cpu: 1 }, ['worker1']],
    ]);
    expect([c.capacity, c.used, c.reserved]).toEqual([{ cpu: 16 }, { cpu: 3 }, { cpu: 1 }]);
  });

  it('answer 404 for the history of an unknown job', async () => {
    const res = await app.request('/api/v1/jobs/default/nope/history');
    expect(res.status).toBe(404);
  });
});
