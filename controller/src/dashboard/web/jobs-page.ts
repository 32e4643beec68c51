/** The Jobs page: one row per job, updated in place on every live event; sortable and filterable. */
import type { JobRow, Overview } from '../job-rows';
import { shapeText } from '../job-rows';
import { duration, num } from '../format';
import { api } from './api';
import { h, replace } from './dom';
import { atJobTime, ordinal, percent, PHASE_LABEL, remainingText, wallClock } from './view-format';
import type { Page } from './page';

type SortKey = 'name' | 'state' | 'shape' | 'progress' | 'completion' | 'restarts' | 'queue' | 'waiting';

const COLUMNS: readonly { key: SortKey; label: string }[] = [
  { key: 'name', label: 'Job' },
  { key: 'state', label: 'State' },
  { key: 'shape', label: 'Shape (PS × workers)' },
  { key: 'progress', label: 'Progress' },
  { key: 'completion', label: 'Predicted completion' },
  { key: 'restarts', label: 'Restarts' },
  { key: 'queue', label: 'Queue' },
  { key: 'waiting', label: 'Waiting because' },
];

/** What a column sorts by; nulls ("—") always last. */
const SORT_VALUE: Record<SortKey, (j: JobRow) => number | string | null> = {
  name: (j) => j.name,
  state: (j) => j.state,
  shape: (j) => (j.shape ? j.shape.ps + j.shape.workers : null),
  progress: (j) => j.progress,
  completion: (j) =>
    j.finishedAt !== null ? -1e12 + j.finishedAt : (j.predictedRemainingSec?.value ?? null),
  restarts: (j) => j.restarts,
  queue: (j) => j.queuePosition,
  waiting: (j) => j.waiting,
};

export function jobsPage(): Page {
  let sort: { key: SortKey; dir: 1 | -1 } | null = null;
  let filter = '';
  let last: Overview | null = null;
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const caption = h('caption', {}, 'Jobs, in submission order');
  const body = h('tbody');
  const headers = COLUMNS.map((c) =>
    h(
      'th',
      { scope: 'col', 'data-sort-key': c.key },
      h('button', { type: 'button', class: 'sort', onclick: () => sortBy(c.key) }, c.label),
    ),
  );
  const table = h(
    'table',
    { class: 'jobs', 'data-testid': 'jobs-table' },
    caption,
    h('thead', {}, h('tr', {}, ...headers)),
    body,
  );
  const search = h('input', {
    type: 'search',
    'data-testid': 'jobs-filter',
    placeholder: 'name, state or reason',
    'aria-label': 'Filter jobs by name, namespace, state or reason',
    oninput: (e: Event) => {
      filter = (e.target as HTMLInputElement).value.trim().toLowerCase();
      draw();
    },
  });
  const shown = h('span', { class: 'muted', 'data-testid': 'jobs-shown' });
  const root = h(
    'section',
    { 'aria-labelledby': 'jobs-title' },
    h('h1', { id: 'jobs-title' }, 'Jobs'),
    summary,
    h('div', { class: 'toolbar' }, h('label', {}, 'Filter ', search), shown),
    h('div', { class: 'scroll' }, table),
  );

  function sortBy(key: SortKey): void {
    // Ascending, descending, then back to submission order.
    sort = sort?.key !== key ? { key, dir: 1 } : sort.dir === 1 ? { key, dir: -1 } : null;
    draw();
  }

  function draw(): void {
    if (!last) return;
    const o = last;
    const rows = o.jobs.filter((j) => matches(j, filter));
    if (sort) {
      const { key, dir } = sort;
      rows.sort((a, b) => compare(SORT_VALUE[key](a), SORT_VALUE[key](b), dir) || a.id.localeCompare(b.id));
    }
    for (const th of headers) {
      const key = th.getAttribute('data-sort-key');
      if (sort?.key === key) th.setAttribute('aria-sort', sort.dir === 1 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    }
    const label = sort ? COLUMNS.find((c) => c.key === sort?.key)?.label : null;
    replace(caption, label ? `Jobs, by ${label.toLowerCase()}` : 'Jobs, in submission order');
    replace(shown, filter ? `showing ${rows.length} of ${o.jobs.length}` : '');
    replace(
      body,
      ...(o.jobs.length === 0
        ? [emptyRow('No jobs yet.')]
        : rows.length === 0
          ? [emptyRow(`No job matches “${filter}”.`)]
          : rows.map((j) => row(j))),
    );
  }

  return {
    title: 'Jobs',
    element: root,
    async refresh() {
      last = await api.overview();
      replace(summary, summaryText(last));
      draw();
    },
    destroy() {},
  };
}

function matches(j: JobRow, filter: string): boolean {
  if (!filter) return true;
  return [j.name, j.namespace, j.id, j.state, PHASE_LABEL[j.state] ?? '', j.waiting ?? '', j.mode].some((s) =>
    s.toLowerCase().includes(filter),
  );
}

function compare(a: number | string | null, b: number | string | null, dir: 1 | -1): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return (typeof a === 'string' ? a.localeCompare(String(b)) : a - Number(b)) * dir;
}

function summaryText(o: Overview): string {
  const parts = Object.entries(o.counts).map(([state, n]) => `${n} ${PHASE_LABEL[state] ?? state}`);
  return `${o.jobs.length} ${o.jobs.length === 1 ? 'job' : 'jobs'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

function emptyRow(text: string): HTMLTableRowElement {
  return h('tr', {}, h('td', { colspan: COLUMNS.length }, text));
}

/** Predicted completion in job time; its wall-clock time beside it, labelled. */
function completion(j: JobRow): (Node | string)[] {
  if (j.state === 'done')
    return [
      j.finishedAt === null ? 'finished' : `finished ${atJobTime(j.finishedAt)}`,
      ...(j.jct === null ? [] : [h('span', { class: 'muted' }, `, JCT ${duration(j.jct)}`)]),
    ];
  if (j.state === 'failed') return ['failed'];
  if (j.predictedRemainingSec === null) return ['—'];
  return [
    remainingText(j.predictedRemainingSec),
    ...(j.predictedCompletion
      ? [
          h(
            'span',
            { class: 'muted wall', title: 'wall-clock time' },
            ` ${wallClock(j.predictedCompletion.value)}`,
          ),
        ]
      : []),
  ];
}

function row(j: JobRow): HTMLTableRowElement {
  const progress = j.progress;
  const bar = h('progress', {
    max: 100,
    ...(progress !== null && { value: Math.floor(progress * 100) }),
    'aria-label': `progress of ${j.name}`,
  });
  return h(
    'tr',
    { 'data-job': j.id, class: `phase-${j.state}` },
    h(
      'th',
      { scope: 'row' },
      h('a', { href: `#/jobs/${j.id}` }, j.name),
      h('span', { class: 'muted' }, ` ${j.namespace} · ${j.mode}`),
    ),
    h(
      'td',
      { 'data-col': 'state', 'data-label': 'State' },
      h('span', { class: `badge ${j.state}` }, PHASE_LABEL[j.state] ?? j.state),
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
    h('td', { 'data-col': 'completion', 'data-label': 'Predicted completion' }, ...completion(j)),
    h('td', { 'data-col': 'restarts', 'data-label': 'Restarts', class: 'num' }, String(j.restarts)),
    h(
      'td',
      { 'data-col': 'queue', 'data-label': 'Queue' },
      j.queuePosition === null ? '—' : `${ordinal(j.queuePosition)} in queue`,
    ),
    h('td', { 'data-col': 'waiting', 'data-label': 'Waiting because' }, j.waiting ?? ''),
  );
}
