/** The Jobs page: one row per job, updated in place on every live event. */
import type { Overview } from '../job-rows';
import { shapeText } from '../job-rows';
import { num } from '../format';
import { api } from './api';
import { h, replace } from './dom';
import { completionText, ordinal, percent, PHASE_LABEL } from './view-format';
import type { Page } from './page';

const COLUMNS = [
  'Job',
  'State',
  'Shape (PS × workers)',
  'Progress',
  'Predicted completion',
  'Restarts',
  'Queue',
  'Waiting because',
];

export function jobsPage(): Page {
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const body = h('tbody');
  const table = h(
    'table',
    { class: 'jobs', 'data-testid': 'jobs-table' },
    h('caption', {}, 'Jobs, in submission order'),
    h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  const root = h(
    'section',
    { 'aria-labelledby': 'jobs-title' },
    h('h1', { id: 'jobs-title' }, 'Jobs'),
    summary,
    h('div', { class: 'scroll' }, table),
  );
  return {
    title: 'Jobs',
    element: root,
    async refresh() {
      const o = await api.overview();
      replace(summary, summaryText(o));
      replace(body, ...(o.jobs.length === 0 ? [emptyRow()] : o.jobs.map((j) => row(j, o.now))));
    },
    destroy() {},
  };
}

function summaryText(o: Overview): string {
  const parts = Object.entries(o.counts).map(([phase, n]) => `${n} ${PHASE_LABEL[phase] ?? phase}`);
  return `${o.jobs.length} ${o.jobs.length === 1 ? 'job' : 'jobs'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

function emptyRow(): HTMLTableRowElement {
  return h('tr', {}, h('td', { colspan: COLUMNS.length }, 'No jobs yet.'));
}

function row(j: Overview['jobs'][number], now: number): HTMLTableRowElement {
  const progress = j.progress;
  const bar = h('progress', {
    max: 100,
    ...(progress !== null && { value: Math.floor(progress * 100) }),
    'aria-label': `progress of ${j.name}`,
  });
  return h(
    'tr',
    { 'data-job': j.id, class: `phase-${j.phase}` },
    h(
      'th',
      { scope: 'row' },
      h('a', { href: `#/jobs/${j.id}` }, j.name),
      h('span', { class: 'muted' }, ` ${j.namespace} · ${j.mode}`),
    ),
    h(
      'td',
      { 'data-col': 'state', 'data-label': 'State' },
      h('span', { class: `badge ${j.phase}` }, PHASE_LABEL[j.phase] ?? j.phase),
    ),
    h('td', { 'data-col': 'shape', 'data-label': 'Shape' }, j.shape ? shapeText(j.shape) : '—'),
    h(
      'td',
      { 'data-col': 'progress', 'data-label': 'Progress' },
      bar,
      ' ',
      h('span', { class: 'num' }, percent(progress)),
      h('span', { class: 'muted' }, ` ${num(j.stepsDone)} steps`),
    ),
    h(
      'td',
      { 'data-col': 'completion', 'data-label': 'Predicted completion' },
      j.phase === 'done' && j.jct !== null
        ? `finished, JCT ${num(j.jct)} s`
        : completionText(j.predictedCompletion, now),
    ),
    h('td', { 'data-col': 'restarts', 'data-label': 'Restarts', class: 'num' }, String(j.restarts)),
    h(
      'td',
      { 'data-col': 'queue', 'data-label': 'Queue' },
      j.queuePosition === null ? '—' : `${ordinal(j.queuePosition)} in queue`,
    ),
    h('td', { 'data-col': 'waiting', 'data-label': 'Waiting because' }, j.waiting ?? ''),
  );
}
