/**
 * The `eval speed` protocol, pure: for each job and seed, fit on k shapes (random or chosen), predict
 * the job's steps/s at every other shape, and pool the relative errors |pred − true| / true of the
 * best model and of the paper baseline (Eq. 3/4) fitted on the SAME samples.
 */
import { fitSpeedModel } from './best-model';
import type { MeasuredData, MeasuredJob } from './measured-data';
import { fitPaperSpeedModel, type SpeedFitOptions } from './paper-model';
import { mixSeed, sampleIndices, seededRandom } from '../random';
import { quantile } from './samples';
import { chooseSampleShapes } from './shape-chooser';
import type { SpeedModel, SpeedSample } from './types';

export interface SpeedEvalOptions {
  /** k: shapes to fit on. */
  readonly samples: number;
  /** Seeds firstSeed..firstSeed+seeds−1. */
  readonly seeds: number;
  /** First seed (default 1). */
  readonly firstSeed?: number;
  /** Let the shape chooser pick the k shapes (the seed only breaks ties). */
  readonly choose: boolean;
  /** The model under test (default {@link fitSpeedModel}); injectable to compare variants. */
  readonly fit?: (samples: readonly SpeedSample[], opts: SpeedFitOptions) => SpeedModel;
}

export interface ErrorSummary {
  readonly medianError: number;
  readonly p90Error: number;
}

export interface ModelEval extends ErrorSummary {
  readonly baseline: ErrorSummary;
  readonly predictions: number;
}

export interface SpeedEvalResult extends ErrorSummary {
  readonly samples: number;
  readonly seeds: number;
  readonly models: Record<string, ModelEval>;
  readonly baseline: ErrorSummary;
  /** Share of predictions whose 90% interval contains the truth. */
  readonly intervalCoverage: number;
  /** Jobs with no more than k shapes (nothing left to predict). */
  readonly skippedModels: readonly string[];
}

export function summary(errors: readonly number[]): ErrorSummary {
  return { medianError: quantile(errors, 0.5), p90Error: quantile(errors, 0.9) };
}

function pickIndices(job: MeasuredJob, opts: SpeedEvalOptions, seed: number, jobIndex: number): number[] {
  if (!opts.choose)
    return sampleIndices(seededRandom(mixSeed(seed, jobIndex)), job.shapes.length, opts.samples);
  const chosen = chooseSampleShapes({
    budget: opts.samples,
    maxPs: Math.max(...job.shapes.map((s) => s.ps)),
    maxWorkers: Math.max(...job.shapes.map((s) => s.workers)),
    mode: job.mode,
    candidates: job.shapes,
    seed,
  });
  return chosen.map((c) => job.shapes.findIndex((s) => s.ps === c.ps && s.workers === c.workers));
}

export interface JobErrors {
  readonly ours: number[];
  readonly paper: number[];
  covered: number;
}

/** The relative errors of one job over all seeds (its index in the data seeds the draws). */
export function evalJob(job: MeasuredJob, jobIndex: number, opts: SpeedEvalOptions): JobErrors {
  const out: JobErrors = { ours: [], paper: [], covered: 0 };
  const fitOpts = { mode: job.mode, globalBatch: job.globalBatch };
  const first = opts.firstSeed ?? 1;
  for (let seed = first; seed < first + opts.seeds; seed++) {
    const picked = new Set(pickIndices(job, opts, seed, jobIndex));
    const samples: SpeedSample[] = [...picked].map((i) => {
      const s = job.shapes[i]!;
      return { ps: s.ps, workers: s.workers, stepsPerSec: s.stepsPerSec };
    });
    const ours = (opts.fit ?? fitSpeedModel)(samples, fitOpts);
    const paper = fitPaperSpeedModel(samples, fitOpts);
    job.shapes.forEach((s, i) => {
      if (picked.has(i)) return;
      const p = ours.predict(s.ps, s.workers);
      out.ours.push(Math.abs(p.stepsPerSec - s.stepsPerSec) / s.stepsPerSec);
      out.paper.push(Math.abs(paper.predict(s.ps, s.workers).stepsPerSec - s.stepsPerSec) / s.stepsPerSec);
      if (p.lower <= s.stepsPerSec && s.stepsPerSec <= p.upper) out.covered += 1;
    });
  }
  return out;
}

/** Runs the protocol over every job of the data. */
export function evaluateSpeedModels(data: MeasuredData, opts: SpeedEvalOptions): SpeedEvalResult {
  if (!Number.isInteger(opts.samples) || opts.samples < 1)
    throw new RangeError(`samples must be a positive integer, got ${opts.samples}`);
  if (!Number.isInteger(opts.seeds) || opts.seeds < 1)
    throw new RangeError(`seeds must be a positive integer, got ${opts.seeds}`);
  const models: Record<string, ModelEval> = {};
  const skippedModels: string[] = [];
  const ours: number[] = [];
  const paper: number[] = [];
  let covered = 0;
  data.jobs.forEach((job, jobIndex) => {
    if (job.shapes.length <= opts.samples) {
      skippedModels.push(job.model);
      return;
    }
    const e = evalJob(job, jobIndex, opts);
    models[job.model] = { ...summary(e.ours), baseline: summary(e.paper), predictions: e.ours.length };
    ours.push(...e.ours);
    paper.push(...e.paper);
    covered += e.covered;
  });
  if (ours.length === 0)
    throw new RangeError(`no job has more than ${opts.samples} shapes: nothing to predict`);
  return {
    samples: opts.samples,
    seeds: opts.seeds,
    models,
    ...summary(ours),
    baseline: summary(paper),
    intervalCoverage: covered / ours.length,
    skippedModels,
  };
}
