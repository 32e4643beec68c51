/**
 * Pictures of a simulation: vega-lite specs rendered headless (vega → SVG, optionally PNG via resvg).
 * JCT CDF per policy, running tasks and utilisation over time, and one job's loss curve with its fitted
 * curve and predicted convergence.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { fittedLoss } from '../models/convergence/fitted-curve';
import { lossAt, observeLoss, resolveWork } from './loss-curve';
import type { VariantResult } from './evaluate';
import type { Trace } from './trace';

async function render(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

function jctCdf(results: ReadonlyMap<string, VariantResult>): TopLevelSpec {
  const values = [...results].flatMap(([policy, r]) => {
    const jcts = r.first.jobs.map((j) => j.jct).sort((a, b) => a - b);
    return jcts.map((jct, i) => ({ policy, jct, fraction: (i + 1) / jcts.length }));
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'Job completion time CDF (seed 1)',
    width: 520,
    height: 320,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'jct', type: 'quantitative', title: 'JCT (s)' },
      y: { field: 'fraction', type: 'quantitative', title: 'fraction of jobs' },
      color: { field: 'policy', type: 'nominal' },
    },
  };
}

function overTime(
  results: ReadonlyMap<string, VariantResult>,
  field: 'runningTasks' | 'utilization',
  title: string,
): TopLevelSpec {
  const values = [...results].flatMap(([policy, r]) =>
    r.first.timeline.map((p) => ({ policy, t: p.t / 3600, v: p[field] })),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: `${title} over time (seed 1)`,
    width: 520,
    height: 320,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'time (h)' },
      y: { field: 'v', type: 'quantitative', title },
      color: { field: 'policy', type: 'nominal' },
    },
  };
}

/** Observed points, true curve, the fit at about half of the job's progress and its predicted convergence. */
function lossPlot(
  results: ReadonlyMap<string, VariantResult>,
  trace: Trace,
  jobId: string,
): TopLevelSpec | null {
  const job = trace.jobs.find((j) => j.id === jobId);
  const watched = results.get('optimus')?.first.watched ?? [];
  if (!job) return null;
  const truth = resolveWork(job.work, job.stepsPerEpoch);
  const mid =
    watched.find((w) => w.beta !== null && w.done >= truth.totalSteps / 2) ??
    watched.find((w) => w.beta !== null);
  const every = Math.max(1, Math.floor(job.stepsPerEpoch / 8));
  const observed = observeLoss({
    seed: 1,
    jobId,
    truth: truth.convergence,
    stepsPerEpoch: job.stepsPerEpoch,
    every,
    fromStep: 0,
    toStep: truth.totalSteps,
  });
  const values: { step: number; loss: number; series: string }[] = observed.map((p) => ({
    ...p,
    series: 'observed (noisy)',
  }));
  const n = 100;
  for (let i = 0; i <= n; i++) {
    const step = (truth.totalSteps * 1.3 * i) / n;
    values.push({
      step,
      loss: lossAt(truth.convergence.curve, step / job.stepsPerEpoch),
      series: 'ground truth',
    });
    if (mid?.beta)
      values.push({
        step,
        loss: fittedLoss(
          { beta: mid.beta, ...(mid.exponential ? { exponential: mid.exponential } : {}) },
          step,
        ),
        series: `fit at ${Math.round(mid.done)} steps`,
      });
  }
  const rules = [{ step: truth.totalSteps, what: 'true convergence' }];
  if (mid?.predictedTotalSteps) rules.push({ step: mid.predictedTotalSteps, what: 'predicted convergence' });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: `${jobId} (${job.type}, ${job.mode}): loss, fit and predicted convergence`,
    width: 520,
    height: 320,
    layer: [
      {
        data: { values },
        mark: { type: 'line', point: false },
        encoding: {
          x: { field: 'step', type: 'quantitative', title: 'step' },
          y: { field: 'loss', type: 'quantitative', title: 'training loss' },
          color: { field: 'series', type: 'nominal' },
        },
      },
      {
        data: { values: rules },
        mark: { type: 'rule', strokeDash: [4, 4] },
        encoding: { x: { field: 'step', type: 'quantitative' }, color: { field: 'what', type: 'nominal' } },
      },
    ],
  };
}

export interface PlotOptions {
  readonly dir: string;
  readonly results: ReadonlyMap<string, VariantResult>;
  readonly trace: Trace;
  readonly watchJob: string | undefined;
  readonly png: boolean;
}

/** Writes the plots; returns the paths written. */
export async function writePlots(o: PlotOptions): Promise<string[]> {
  mkdirSync(o.dir, { recursive: true });
  const specs: [string, TopLevelSpec | null][] = [
    ['jct-cdf', jctCdf(o.results)],
    ['running-tasks', overTime(o.results, 'runningTasks', 'running tasks')],
    ['utilization', overTime(o.results, 'utilization', 'utilisation')],
    ['loss-curve', o.watchJob ? lossPlot(o.results, o.trace, o.watchJob) : null],
  ];
  const written: string[] = [];
  for (const [name, spec] of specs) {
    if (!spec) continue;
    const svg = await render(spec);
    const svgPath = join(o.dir, `${name}.svg`);
    writeFileSync(svgPath, svg);
    written.push(svgPath);
    if (o.png) {
      const pngPath = join(o.dir, `${name}.png`);
      writeFileSync(pngPath, new Resvg(svg, { background: 'white' }).render().asPng());
      written.push(pngPath);
    }
  }
  return written;
}
