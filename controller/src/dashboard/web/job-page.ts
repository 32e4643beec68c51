/**
 * One job: loss with the fitted curve and the predicted convergence step, how the prediction
 * moved, the speed model over shapes, the shape over time and the decisions that changed it.
 */
import uPlot from 'uplot';
import { compactDuration, duration, num } from '../format';
import type { JobDetail } from '../job-detail';
import { shapeText } from '../job-rows';
import { api } from './api';
import { align, jobTimeAxis, jobTimeSeries, LiveChart, lineSeries, PALETTE, pointsSeries } from './charts';
import { h, replace } from './dom';
import type { Page } from './page';
import { atJobTime, clockTime, jobTimeTicks, PHASE_LABEL, remainingText, wallClock } from './view-format';

/** A prediction holds until the next refit: drawn as steps. */
const stepped = uPlot.paths.stepped!({ align: 1 });

export function jobPage(id: string): Page {
  const facts = h('dl', { class: 'facts', 'data-testid': 'job-facts' });
  const charts = {
    loss: new LiveChart(
      `Training loss of ${id} by step, with the fitted convergence curve and the predicted convergence step`,
    ),
    prediction: new LiveChart(
      `Predicted total steps of ${id} over time, with its interval, and the steps done`,
    ),
    speed: new LiveChart(
      `Predicted speed of ${id} by number of workers, one line per PS count; measured shapes as dots`,
    ),
    shape: new LiveChart(`PS and workers of ${id} over time; pre-run samples shaded`, 200),
  };
  const decisions = h('tbody');
  const speedNote = h('p', { class: 'muted', 'data-testid': 'speed-note' });
  let detail: JobDetail | null = null;
  const card = (title: string, note: string | HTMLElement, ...content: Node[]) =>
    h(
      'section',
      { class: 'card' },
      h('h2', {}, title),
      typeof note === 'string' ? h('p', { class: 'muted' }, note) : note,
      ...content,
    );
  const root = h(
    'section',
    { 'aria-labelledby': 'job-title' },
    h('p', {}, h('a', { href: '#/jobs' }, '← all jobs')),
    h('h1', { id: 'job-title' }, id),
    facts,
    h(
      'div',
      { class: 'grid' },
      card(
        'Loss and convergence',
        'dots: logged loss; line: fitted curve (paper Eq. 1); vertical lines: see below the chart',
        charts.loss.element,
      ),
      card(
        'Prediction over time',
        'predicted total steps (band: interval) and steps done, over job time',
        charts.prediction.element,
      ),
      card('Speed model', speedNote, charts.speed.element),
      card(
        'Shape over time',
        'dots: each start or resize; shaded: pre-run speed samples; over job time',
        charts.shape.element,
      ),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Decisions'),
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { 'data-testid': 'decisions' },
          h('caption', {}, 'What changed the job, newest first'),
          h(
            'thead',
            {},
            h('tr', {}, ...['Job time', 'Round', 'What', 'Why'].map((c) => h('th', { scope: 'col' }, c))),
          ),
          decisions,
        ),
      ),
    ),
  );
  return {
    title: id,
    element: root,
    async refresh() {
      detail = await api.job(id);
      renderFacts(facts, detail);
      renderLoss(charts.loss, detail);
      renderPrediction(charts.prediction, detail);
      renderSpeed(charts.speed, detail);
      replace(speedNote, speedNoteText(detail));
      renderShape(charts.shape, detail);
      replace(
        decisions,
        ...(detail.decisions.length === 0
          ? [h('tr', {}, h('td', { colspan: 4 }, 'No decisions yet.'))]
          : [...detail.decisions]
              .reverse()
              .map((d) =>
                h(
                  'tr',
                  { class: d.preRun ? 'pre-run' : '' },
                  h('td', { title: `wall clock ${clockTime(d.t)}`, 'data-col': 'at' }, duration(d.at)),
                  h('td', { class: 'num' }, d.round ?? '—'),
                  h('td', {}, d.kind + (d.preRun ? ' (pre-run)' : '')),
                  h('td', {}, d.why),
                ),
              )),
      );
    },
    destroy() {
      for (const c of Object.values(charts)) c.destroy();
    },
  };
}

function renderFacts(el: HTMLElement, d: JobDetail): void {
  const c = d.convergence;
  const done = d.state === 'done';
  const pairs: [string, string][] = [
    ['State', PHASE_LABEL[d.state] ?? d.state],
    ['Shape now', d.speed.current ? shapeText(d.speed.current) : '—'],
    [
      'Limits',
      `${d.limits.minPs}–${d.limits.maxPs} PS, ${d.limits.minWorkers}–${d.limits.maxWorkers} workers`,
    ],
    [
      done ? 'Convergence' : 'Predicted convergence',
      c.status !== 'ok'
        ? `not yet: ${c.reason}`
        : done
          ? `converged after ${num(c.stepsDone)} steps (last prediction: step ${num(c.predictedTotalSteps)}, interval ${num(c.lower)}–${num(c.upper)})`
          : `step ${num(c.predictedTotalSteps)} (interval ${num(c.lower)}–${num(c.upper)}); ${num(c.stepsDone)} done`,
    ],
    ['Speed model', speedFact(d)],
    [
      'Loss points',
      `${d.loss.total}${d.loss.total > d.loss.points.length ? ` (${d.loss.points.length} drawn)` : ''}`,
    ],
  ];
  if (done)
    pairs.push([
      'Finished',
      `${d.finishedAt === null ? '' : `${atJobTime(d.finishedAt)} of job time`}${d.jct === null ? '' : `, JCT ${duration(d.jct)}`}`,
    ]);
  else if (d.state !== 'failed' && d.remainingSec !== null)
    pairs.push([
      'Predicted completion',
      `${remainingText(d.remainingSec)}${d.predictedCompletion ? `, ${wallClock(d.predictedCompletion.value)}` : ''}`,
    ]);
  replace(el, ...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { 'data-fact': k }, v)]));
}

/** The speed model's state; the chart draws a prior until the job's own shapes fit a model. */
function speedFact(d: JobDetail): string {
  const n = d.speed.measured.length;
  if (d.speed.fitted)
    return n >= d.speed.needs
      ? `fitted on ${n} measured shapes`
      : n === 0
        ? 'fitted on the shapes jobs of its model measured'
        : `fitted on its ${n} measured ${n === 1 ? 'shape' : 'shapes'} and those jobs of its model measured`;
  return `not fitted yet: ${n} of the ${d.speed.needs} shapes it needs measured; the chart shows a prior estimate`;
}

function speedNoteText(d: JobDetail): string {
  const lines = d.speed.fitted
    ? 'lines: predicted steps/s by workers, one per PS count (fitted model)'
    : 'dashed lines: a prior estimate of steps/s by workers, one per PS count, until the model is fitted';
  return `${lines}; dots: shapes measured so far`;
}

function renderLoss(chart: LiveChart, d: JobDetail): void {
  const pts = d.loss.points;
  const curve = d.loss.curve ?? [];
  const data = align([
    [pts.map((p) => p.step), pts.map((p) => p.loss)],
    [curve.map((p) => p.step), curve.map((p) => p.loss)],
  ]);
  const c = d.convergence;
  chart.render(
    {
      layout: 'loss',
      options: {
        scales: { x: { time: false } },
        axes: [{ label: 'step' }, { label: 'loss' }],
        series: [
          { label: 'step' },
          pointsSeries('loss', PALETTE[0]!, 4),
          lineSeries('fitted curve', '#111827', { spanGaps: true }),
        ],
        hooks: chart.markHooks(),
      },
    },
    data,
    c.status === 'ok'
      ? {
          bands: [
            {
              from: c.lower,
              to: c.upper,
              color: 'rgba(220,38,38,0.12)',
              label: 'interval of the predicted convergence step',
            },
          ],
          lines: [
            { x: c.predictedTotalSteps, color: '#dc2626', label: 'predicted convergence step' },
            { x: c.stepsDone, color: '#6b7280', dash: [4, 4], label: 'steps done so far' },
          ],
        }
      : { bands: [], lines: [] },
  );
}

function renderPrediction(chart: LiveChart, d: JobDetail): void {
  // A prediction holds until the next refit: the last one is drawn on to now (a finished job's, to its end).
  const end = d.finishedAt ?? d.elapsedSec;
  const lastP = d.predictions.at(-1);
  const p = lastP && end > lastP.at ? [...d.predictions, { ...lastP, at: end }] : d.predictions;
  const x = p.map((q) => q.at);
  const data: uPlot.AlignedData = [
    x,
    p.map((q) => q.totalSteps?.value ?? null),
    p.map((q) => q.totalSteps?.lower ?? null),
    p.map((q) => q.totalSteps?.upper ?? null),
    p.map((q) => q.stepsDone),
  ];
  chart.render(
    {
      layout: 'prediction',
      options: {
        scales: { x: { time: false } },
        axes: [jobTimeAxis(jobTimeTicks), { label: 'steps' }],
        series: [
          jobTimeSeries(compactDuration),
          lineSeries('predicted total', '#dc2626', { paths: stepped }),
          lineSeries('lower', 'rgba(220,38,38,0.5)', { dash: [4, 4], width: 1, paths: stepped }),
          lineSeries('upper', 'rgba(220,38,38,0.5)', { dash: [4, 4], width: 1, paths: stepped }),
          lineSeries('steps done', PALETTE[0]!),
        ],
        bands: [{ series: [3, 2], fill: 'rgba(220,38,38,0.10)' }],
      },
    },
    data,
  );
}

function renderSpeed(chart: LiveChart, d: JobDetail): void {
  const psValues = [...new Set(d.speed.grid.map((c) => c.ps))].sort((a, b) => a - b);
  const tables: [number[], (number | null)[]][] = [];
  for (const ps of psValues) {
    const cells = d.speed.grid.filter((c) => c.ps === ps);
    tables.push([cells.map((c) => c.workers), cells.map((c) => c.stepsPerSec)]);
  }
  for (const ps of psValues) {
    const m = d.speed.measured.filter((s) => s.ps === ps).sort((a, b) => a.workers - b.workers);
    tables.push([m.map((s) => s.workers), m.map((s) => s.stepsPerSec)]);
  }
  const prior = !d.speed.fitted;
  const series: uPlot.Series[] = [
    { label: 'workers' },
    ...psValues.map((ps, i) =>
      lineSeries(`${ps} PS ${prior ? 'prior' : 'predicted'}`, PALETTE[i % PALETTE.length]!, {
        spanGaps: true,
        ...(prior && { dash: [6, 4] }),
      }),
    ),
    ...psValues.map((ps, i) => pointsSeries(`${ps} PS measured`, PALETTE[i % PALETTE.length]!, 9)),
  ];
  chart.render(
    {
      layout: `speed:${psValues.join(',')}:${prior ? 'prior' : 'fitted'}`,
      options: { scales: { x: { time: false } }, axes: [{ label: 'workers' }, { label: 'steps/s' }], series },
    },
    tables.length ? align(tables) : [[], []],
  );
}

function renderShape(chart: LiveChart, d: JobDetail): void {
  const x: number[] = [];
  const ps: (number | null)[] = [];
  const workers: (number | null)[] = [];
  /** Indexes where a span starts: the starts and resizes, marked with a dot. */
  const starts: number[] = [];
  const now = d.elapsedSec;
  d.spans.forEach((s, i) => {
    const prevEnd = d.spans[i - 1]?.untilAt;
    if (prevEnd != null && prevEnd < s.sinceAt) {
      x.push(prevEnd);
      ps.push(null);
      workers.push(null);
    }
    starts.push(x.length);
    x.push(s.sinceAt, s.untilAt ?? Math.max(now, s.sinceAt));
    ps.push(s.ps, s.ps);
    workers.push(s.workers, s.workers);
  });
  const preRun = d.spans
    .filter((s) => s.preRun)
    .map((s) => ({
      from: s.sinceAt,
      to: s.untilAt ?? now,
      color: 'rgba(234,88,12,0.18)',
      label: 'pre-run speed sample',
    }));
  const marks = { show: true, size: 8, filter: () => starts };
  chart.render(
    {
      // The dots' indexes are baked into the options: a new span rebuilds the chart.
      layout: `shape:${d.spans.length}`,
      options: {
        axes: [jobTimeAxis(jobTimeTicks), { label: 'tasks' }],
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(2, max + 1)] } },
        series: [
          jobTimeSeries(compactDuration),
          lineSeries('PS', PALETTE[1]!, { points: marks }),
          lineSeries('workers', PALETTE[0]!, { points: marks }),
        ],
        hooks: chart.markHooks(),
      },
    },
    [x, ps, workers],
    { bands: preRun, lines: [] },
  );
}
