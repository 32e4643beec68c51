/**
 * The dashboard's entry: a hash router over three pages, refreshed live from the controller's
 * server-sent events (GET /api/v1/events). No page reloads; every asset comes from the controller.
 */
import { duration } from '../format';
import { api, followEvents } from './api';
import { clusterPage } from './cluster-page';
import { h, replace } from './dom';
import { jobPage } from './job-page';
import { jobsPage } from './jobs-page';
import type { Page } from './page';
import './style.css';

const main = document.getElementById('main')!;
const live = document.getElementById('live')!;
const clock = document.getElementById('clock')!;
let page: Page | null = null;
let refreshing: Promise<void> | null = null;
let again = false;

function route(): Page {
  const hash = location.hash.replace(/^#\/?/, '');
  const [first, ns, name] = hash.split('/');
  if (first === 'cluster') return clusterPage();
  if (first === 'jobs' && ns && name) return jobPage(`${decodeURIComponent(ns)}/${decodeURIComponent(name)}`);
  return jobsPage();
}

function show(): void {
  page?.destroy();
  page = route();
  document.title = `${page.title} — Optimus`;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a'))
    a.toggleAttribute(
      'aria-current',
      a.getAttribute('href') === `#/${location.hash.replace(/^#\/?/, '').split('/')[0] || 'jobs'}`,
    );
  replace(main, page.element);
  void refresh();
}

/** One refresh at a time; events during one ask for exactly one more. */
async function refresh(): Promise<void> {
  if (refreshing) {
    again = true;
    return;
  }
  const current = page;
  refreshing = (async () => {
    try {
      await current?.refresh();
      await updateClock();
      main.removeAttribute('data-error');
    } catch (err) {
      main.setAttribute('data-error', err instanceof Error ? err.message : String(err));
    }
  })();
  await refreshing;
  refreshing = null;
  main.setAttribute('data-refreshed', String(Date.now()));
  if (again) {
    again = false;
    void refresh();
  }
}

async function updateClock(): Promise<void> {
  const o = await api.overview();
  replace(clock, `elapsed ${duration(o.elapsedSec)} of job time · time scale ×${o.timeScale}`);
}

const STREAM_TEXT = {
  live: 'live',
  reconnecting: 'reconnecting…',
  off: 'snapshot (live updates off)',
} as const;

function connect(): void {
  followEvents(
    () => {
      main.setAttribute('data-events', String(Number(main.getAttribute('data-events') ?? 0) + 1));
      void refresh();
    },
    (s) => {
      replace(live, h('span', { class: s === 'live' ? 'dot ok' : 'dot' }), ` ${STREAM_TEXT[s]}`);
      live.setAttribute('data-state', s === 'reconnecting' ? 'offline' : s);
    },
  );
}

window.addEventListener('hashchange', show);
show();
connect();
