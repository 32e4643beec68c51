/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (DOM types: the page.evaluate callbacks of this file run in the browser.)
/**
 * The web dashboard in a real browser (Debian's chromium via playwright-core) against a running
 * local mode: live data arrives over server-sent events without reloads, and each view shows the
 * jobs and numbers the API serves. Screenshots go to test-results/dashboard/ and must not be blank.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterView } from '../../controller/src/dashboard/cluster-view';
import type { JobDetail } from '../../controller/src/dashboard/job-detail';
import { shapeText, type Overview } from '../../controller/src/dashboard/job-rows';
import { SMALL_WORKLOAD, type WorkloadJob } from '../../controller/src/local/demo-workload';
import { startLocal, type LocalRun } from '../../controller/src/local/run-local';
import { distinctColours, hasChromium, launchBrowser, type Browser } from './browser';
import { REPO, until } from './helpers';

export const SCREENSHOTS = join(REPO, 'test-results', 'dashboard');

/** The small workload and two later arrivals, so the run still changes while the browser looks. */
const WORKLOAD: readonly WorkloadJob[] = [
  ...SMALL_WORKLOAD,
  ...SMALL_WORKLOAD.slice(0, 2).map((j, i) => ({
    arrival: 540 + 180 * i,
    spec: { ...j.spec, name: `${j.spec.name}-late` },
  })),
];

// Skipped only outside CI when there is no chromium; in CI (.ci/run installs it) a missing browser fails.
describe.skipIf(!hasChromium() && process.env['CI'] !== 'true')('dashboard in a real browser', () => {
  let dir = '';
  let run: LocalRun;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];
  let loads = 0;
  const api = async <T>(path: string): Promise<T> =>
    (
      await fetch(`${run.http.url}${path}`, { headers: { authorization: `Bearer ${run.apiToken}` } })
    ).json() as Promise<T>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'optimus-dashboard-'));
    mkdirSync(SCREENSHOTS, { recursive: true });
    run = await startLocal({
      stateDir: dir,
      workload: WORKLOAD,
      timeScale: 20,
      schedulingIntervalSec: 120,
      restartCostSec: 20,
      policy: 'optimus',
      httpPort: 0,
      logLevel: 'warn',
    });
    // Live data worth showing: every job known, one with a fitted convergence curve and a decision.
    await until(
      'a job with fitted models and a decision',
      async () => {
        const o = await api<Overview>('/api/v1/overview');
        const running = o.jobs.find((j) => j.phase === 'running' && j.progress !== null);
        if (o.jobs.length < SMALL_WORKLOAD.length || !running) return false;
        const d = await api<JobDetail>(`/api/v1/jobs/${running.id}/history`);
        return d.loss.curve !== null && d.decisions.length > 0 && d.predictions.length > 1;
      },
      150_000,
    );
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith(run.http.url)) foreign.push(r.url());
    });
    page.on('load', () => (loads += 1));
    // The link the CLI prints: the token in the fragment, read once by the page (ADR 0031).
    await page.goto(run.dashboardUrl);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await run?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function screenshot(name: string): Promise<void> {
    const png = await page.screenshot({ fullPage: true });
    writeFileSync(join(SCREENSHOTS, `${name}.png`), png);
    // Text, tables and charts: hundreds of colours; a blank page has one or two.
    expect(await distinctColours(page, png)).toBeGreaterThan(50);
  }

  /** Retries `check` until the page and the API agree (both move on while we read them). */
  async function agrees(what: string, check: () => Promise<boolean>): Promise<void> {
    await until(what, check, 20_000);
  }

  it('connects to the live event stream and refreshes without reloading', async () => {
    await page.waitForSelector('#live[data-state="live"]', { timeout: 20_000 });
    const events = async () => Number(await page.getAttribute('main', 'data-events'));
    const before = await events();
    await until('more live events', async () => (await events()) > before + 1, 30_000);
    expect(loads).toBe(1);
    await expect(page.textContent('#clock')).resolves.toMatch(/elapsed .* time scale ×20/);
  }, 60_000);

  it('Jobs: one row per job with the state, shape, restarts, queue and reason the API reports', async () => {
    await page.waitForSelector('tr[data-job]');
    await agrees('jobs table = /api/v1/overview', async () => {
      const o = await api<Overview>('/api/v1/overview');
      const rows = await page.$$eval('tr[data-job]', (trs) =>
        trs.map((tr) => ({
          id: tr.getAttribute('data-job'),
          state: tr.querySelector('[data-col="state"]')?.textContent?.trim(),
          shape: tr.querySelector('[data-col="shape"]')?.textContent?.trim(),
          restarts: tr.querySelector('[data-col="restarts"]')?.textContent?.trim(),
          queue: tr.querySelector('[data-col="queue"]')?.textContent?.trim(),
          waiting: tr.querySelector('[data-col="waiting"]')?.textContent?.trim(),
          progress: tr.querySelector('[data-col="progress"] .num')?.textContent?.trim(),
        })),
      );
      const want = o.jobs.map((j) => ({
        id: j.id,
        state: j.state,
        shape: j.shape ? shapeText(j.shape) : '—',
        restarts: String(j.restarts),
        queue:
          j.queuePosition === null
            ? '—'
            : expect.stringMatching(new RegExp(`^${j.queuePosition}(st|nd|rd|th) in queue$`)),
        waiting: j.waiting ?? '',
        progress: j.progress === null ? '—' : `${Math.floor(j.progress * 100)}\u00a0%`,
      }));
      try {
        expect(rows).toEqual(want);
        return true;
      } catch {
        return false;
      }
    });
    expect(await page.getByRole('navigation', { name: 'Dashboard pages' }).isVisible()).toBe(true);
    for (const bar of await page.$$('progress'))
      expect(await bar.getAttribute('aria-label')).toMatch(/^progress of /);
    await screenshot('jobs');
  }, 60_000);

  it('Cluster: every server with the tasks the API places on it', async () => {
    await page.getByRole('link', { name: 'Cluster', exact: true }).click();
    await page.waitForSelector('[data-server]');
    await agrees('servers and tasks = /api/v1/cluster', async () => {
      const c = await api<ClusterView>('/api/v1/cluster');
      const shown = await page.$$eval('[data-server]', (cards) =>
        cards.map((card) => ({
          name: card.getAttribute('data-server'),
          tasks: [...card.querySelectorAll('li.task')].map(
            (li) => `${li.getAttribute('data-job')} ${li.getAttribute('data-role')}`,
          ),
        })),
      );
      const want = c.servers.map((s) => ({ name: s.name, tasks: s.tasks.map((t) => `${t.job} ${t.role}`) }));
      return JSON.stringify(shown) === JSON.stringify(want);
    });
    expect(await page.$$('figure.chart canvas')).toHaveLength(1);
    await screenshot('cluster');
  }, 60_000);

  it('One job: charts drawn, prediction and decisions as the API reports them', async () => {
    const o = await api<Overview>('/api/v1/overview');
    const job = o.jobs.find((j) => j.progress !== null && j.phase === 'running') ?? o.jobs[0]!;
    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.locator('table.jobs').getByRole('link', { name: job.name, exact: true }).click();
    await page.waitForSelector('[data-testid="job-facts"] dd');
    expect(loads).toBe(1);
    // Four charts, each with a drawn canvas.
    await until('four drawn charts', async () => (await page.$$('figure.chart canvas')).length === 4, 10_000);
    const inked = await page.$$eval('figure.chart canvas', (cs) =>
      (cs as HTMLCanvasElement[]).map((c) => {
        const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) n += 1;
        return n;
      }),
    );
    for (const n of inked) expect(n).toBeGreaterThan(200);
    for (const f of await page.$$('figure.chart'))
      expect(await f.getAttribute('aria-label')).toContain(job.id);
    await agrees('job facts and decisions = history API', async () => {
      const d = await api<JobDetail>(`/api/v1/jobs/${job.id}/history`);
      // "Convergence" once the job has finished (it converged; nothing is predicted any more).
      const fact = await page.textContent('[data-fact="Predicted convergence"], [data-fact="Convergence"]');
      const rows = await page.$$eval('[data-testid="decisions"] tbody tr', (trs) =>
        trs.map((t) => t.textContent),
      );
      const c = d.convergence;
      const factOk =
        c.status === 'ok'
          ? fact?.includes(`step ${Math.round(c.predictedTotalSteps)}`)
          : fact?.startsWith('not yet');
      const decisionsOk =
        rows.length === d.decisions.length &&
        [...d.decisions].reverse().every((x, i) => rows[i]?.includes(x.why));
      // The loss chart's lines (predicted convergence step, steps done) must be the current ones.
      const marks = JSON.parse((await page.getAttribute('figure.chart', 'data-marks')) ?? '[]') as number[];
      const marksOk =
        c.status === 'ok'
          ? marks[0] === c.predictedTotalSteps && marks[1] === c.stepsDone
          : marks.length === 0;
      return factOk === true && decisionsOk && marksOk;
    });
    await screenshot('job');
  }, 60_000);

  it('works with the run’s token, which stays out of the address bar, every URL and every Referer', async () => {
    const tab = await browser.newPage();
    const requested: { url: string; referer: string }[] = [];
    tab.on('request', (r) => requested.push({ url: r.url(), referer: r.headers()['referer'] ?? '' }));
    await tab.goto(run.dashboardUrl);
    await tab.waitForSelector('tr[data-job]');
    expect(tab.url()).not.toContain(run.apiToken);
    expect(await tab.evaluate(() => location.href)).not.toContain('token=');
    expect(requested.length).toBeGreaterThan(2);
    expect(requested.filter((r) => r.url.includes(run.apiToken) || r.referer.includes(run.apiToken))).toEqual(
      [],
    );
    // The live stream carries it too: events arrive.
    await tab.waitForFunction(
      () => Number(document.getElementById('main')?.getAttribute('data-events') ?? 0) > 0,
    );
    // A reload keeps working (sessionStorage), and without the token a page says how to get it.
    await tab.reload();
    await tab.waitForSelector('tr[data-job]');
    await tab.close();
    const bare = await browser.newPage();
    await bare.goto(`${run.http.url}/dashboard/`);
    await bare.waitForFunction(() =>
      document.getElementById('main')?.getAttribute('data-error')?.includes('API token'),
    );
    await bare.close();
  }, 60_000);

  it('fits a narrow window: the page does not scroll sideways, tables scroll within themselves', async () => {
    const narrow = await browser.newPage({ width: 420, height: 900 });
    await narrow.goto(`${run.http.url}/dashboard/#/jobs&token=${run.apiToken}`);
    await narrow.waitForSelector('tr[data-job]');
    const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    const png = await narrow.screenshot({ fullPage: true });
    writeFileSync(join(SCREENSHOTS, 'jobs-narrow.png'), png);
    expect(await distinctColours(narrow, png)).toBeGreaterThan(50);
    await narrow.close();
  });

  it('loaded nothing from outside the controller', () => {
    expect(foreign).toEqual([]);
  });
});
