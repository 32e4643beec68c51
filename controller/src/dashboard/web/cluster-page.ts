/** The Cluster page: servers with the tasks placed on each, and utilisation over time per resource. */
import uPlot from 'uplot';
import type { Resources } from '../../../../shared/src/units';
import type { ClusterView, ServerView } from '../cluster-view';
import { compactDuration, num } from '../format';
import { api } from './api';
import { jobTimeAxis, jobTimeSeries, LiveChart, lineSeries, PALETTE } from './charts';
import { h, replace } from './dom';
import type { Page } from './page';
import { jobTimeTicks } from './view-format';

export function clusterPage(): Page {
  const totals = h('p', { class: 'summary', 'data-testid': 'cluster-totals' });
  const servers = h('div', { class: 'servers', 'data-testid': 'servers' });
  const chart = new LiveChart('Cluster utilisation over time, percent of capacity per resource');
  const root = h(
    'section',
    { 'aria-labelledby': 'cluster-title' },
    h('h1', { id: 'cluster-title' }, 'Cluster'),
    totals,
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Utilisation over time'),
      h(
        'p',
        { class: 'muted' },
        "our jobs' tasks plus what others reserve, as a share of capacity, over job time",
      ),
      chart.element,
    ),
    h('h2', { class: 'section-title' }, 'Servers'),
    servers,
  );
  return {
    title: 'Cluster',
    element: root,
    async refresh() {
      const c = await api.cluster();
      replace(
        totals,
        ...c.resources.map((r, i) =>
          h(
            'span',
            { class: 'total' },
            `${i ? ' · ' : ''}${r} ${amount(r, (c.used[r] ?? 0) + (c.reserved[r] ?? 0))} of ${amount(r, c.capacity[r] ?? 0)} (${pct(c.used, c.reserved, c.capacity, r)})`,
          ),
        ),
      );
      replace(servers, ...c.servers.map((s) => serverCard(s, c.resources)));
      renderUtilisation(chart, c);
    },
    destroy: () => chart.destroy(),
  };
}

function serverCard(s: ServerView, resources: readonly string[]): HTMLElement {
  const meters = resources.map((r) => {
    const cap = s.capacity[r] ?? 0;
    const used = (s.used[r] ?? 0) + (s.reserved[r] ?? 0);
    return h(
      'div',
      { class: 'meter' },
      h(
        'label',
        {},
        `${r} ${amount(r, used)} / ${amount(r, cap)}`,
        h('meter', { min: 0, max: cap || 1, value: used, 'aria-label': `${r} used on ${s.name}` }),
      ),
    );
  });
  const tasks = s.tasks.length
    ? h(
        'ul',
        { class: 'tasks' },
        ...s.tasks.map((t) =>
          h(
            'li',
            { class: `task ${t.role}${t.preRun ? ' pre-run' : ''}`, 'data-job': t.job, 'data-role': t.role },
            h('a', { href: `#/jobs/${t.job}` }, t.job.split('/')[1] ?? t.job),
            ` ${t.role === 'ps' ? 'PS' : 'worker'} ${t.index}${t.preRun ? ' (pre-run)' : ''}`,
          ),
        ),
      )
    : h('p', { class: 'muted' }, 'no tasks');
  return h(
    'article',
    { class: 'card server', 'data-server': s.name, 'aria-label': `server ${s.name}` },
    h(
      'h3',
      {},
      s.name,
      h('span', { class: 'muted' }, ` ${s.tasks.length} ${s.tasks.length === 1 ? 'task' : 'tasks'}`),
    ),
    ...meters,
    tasks,
  );
}

function renderUtilisation(chart: LiveChart, c: ClusterView): void {
  // A value holds until the next change: the last one is drawn on to now.
  const last = c.utilisation.at(-1);
  const pts =
    last && c.elapsedSec !== null && c.elapsedSec > last.at
      ? [...c.utilisation, { ...last, at: c.elapsedSec }]
      : c.utilisation;
  const data: uPlot.AlignedData = [
    pts.map((p) => p.at),
    ...c.resources.map((r) =>
      pts.map((p) => ((p.capacity[r] ?? 0) > 0 ? (100 * (p.used[r] ?? 0)) / (p.capacity[r] ?? 1) : null)),
    ),
  ];
  chart.render(
    {
      layout: `util:${c.resources.join(',')}`,
      options: {
        axes: [jobTimeAxis(jobTimeTicks), { label: '% of capacity' }],
        // Headroom above 100 %: a resource in full use is a line drawn whole, not one clipped at the edge.
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(100, max) + 8] } },
        series: [
          jobTimeSeries(compactDuration),
          ...c.resources.map((r, i) => lineSeries(r, PALETTE[i % PALETTE.length]!, { paths: stepped })),
        ],
      },
    },
    data,
  );
}

/** Utilisation changes at decisions and holds in between: steps, not slopes. */
const stepped = uPlot.paths.stepped!({ align: 1 });

const GiB = 1024 ** 3;
const amount = (r: string, v: number): string => (r === 'memory' ? `${num(v / GiB)} GiB` : num(v));
const pct = (used: Resources, reserved: Resources, cap: Resources, r: string): string =>
  (cap[r] ?? 0) > 0 ? `${Math.round((100 * ((used[r] ?? 0) + (reserved[r] ?? 0))) / (cap[r] ?? 1))} %` : '—';
