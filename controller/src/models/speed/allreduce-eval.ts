/**
 * The `eval speed` protocol on all-reduce data, pure: for each job and seed, fit on k measured
 * configurations drawn at random, predict the job's steps/s at every other configuration, and pool
 * the relative errors |pred − true| / true of our model and of Pollux's throughput model fitted on
 * the SAME samples. The same fits also predict the job's configurations on more nodes than any
 * sample (`beyond`: extrapolation). At a configuration the batch is fixed, so the relative error of
 * steps/s is that of samples/s.
 */
import { fitAllReduceSpeed } from './allreduce-fit';
import type { AllReduceSample, AllReduceSpeedModel } from './allreduce-types';
import { fitPolluxThroughput } from './pollux-throughput';
import type { AllReduceConfiguration, AllReduceData, AllReduceJob } from './pollux-data';
import { mixSeed, sampleIndices, seededRandom } from '../random';
import { summary, type ErrorSummary } from './speed-eval';

export interface AllReduceEvalOptions {
  /** k: configurations each fit sees. */
  readonly samples: number;
  /** Seeds firstSeed..firstSeed+seeds−1. */
  readonly seeds: number;
  readonly firstSeed?: number;
  /** The model under test (default {@link fitAllReduceSpeed}); injectable to compare variants. */
  readonly fit?: (samples: readonly AllReduceSample[]) => Pick<AllReduceSpeedModel, 'predict'>;
}

export interface PairedErrors extends ErrorSummary {
  readonly baseline: ErrorSummary;
  readonly predictions: number;
}

export interface AllReduceModelEval extends PairedErrors {
  readonly configurations: number;
  /** Share of predictions where ours is strictly closer than Pollux's. */
  readonly oursCloser: number;
  readonly beyond: PairedErrors | null;
}

export interface AllReduceEvalResult extends ErrorSummary {
  readonly kind: 'allreduce';
  readonly samples: number;
  readonly seeds: number;
  readonly baselineName: 'pollux-throughput';
  readonly baseline: ErrorSummary;
  readonly predictions: number;
  readonly oursCloser: number;
  /** Share of our predictions whose 90% interval contains the truth. */
  readonly intervalCoverage: number;
  readonly models: Record<string, AllReduceModelEval>;
  readonly beyond: PairedErrors | null;
  /** Jobs with no more than k configurations (nothing left to predict). */
  readonly skippedModels: readonly string[];
}

interface Errors {
  readonly ours: number[];
  readonly pollux: number[];
  readonly beyondOurs: number[];
  readonly beyondPollux: number[];
  covered: number;
}

const relativeError = (predicted: number, truth: number): number => Math.abs(predicted - truth) / truth;

function sampleOf(c: AllReduceConfiguration): AllReduceSample {
  return { workers: c.workers, servers: c.servers, localBatch: c.localBatch, stepsPerSec: c.stepsPerSec };
}

function evalJob(job: AllReduceJob, jobIndex: number, opts: AllReduceEvalOptions): Errors {
  const out: Errors = { ours: [], pollux: [], beyondOurs: [], beyondPollux: [], covered: 0 };
  const first = opts.firstSeed ?? 1;
  const fit = opts.fit ?? ((s: readonly AllReduceSample[]) => fitAllReduceSpeed(s));
  const n = job.configurations.length;
  for (let seed = first; seed < first + opts.seeds; seed++) {
    const picked = new Set(sampleIndices(seededRandom(mixSeed(seed, jobIndex)), n, opts.samples));
    const samples = [...picked].map((i) => sampleOf(job.configurations[i] as AllReduceConfiguration));
    const ours = fit(samples);
    const pollux = fitPolluxThroughput(samples);
    job.configurations.forEach((c, i) => {
      if (picked.has(i)) return;
      const p = ours.predict(c.workers, c.servers, c.localBatch);
      out.ours.push(relativeError(p.stepsPerSec, c.stepsPerSec));
      out.pollux.push(
        relativeError(pollux.predict(c.workers, c.servers, c.localBatch).stepsPerSec, c.stepsPerSec),
      );
      if (p.lower <= c.stepsPerSec && c.stepsPerSec <= p.upper) out.covered += 1;
    });
    for (const c of job.beyond) {
      out.beyondOurs.push(
        relativeError(ours.predict(c.workers, c.servers, c.localBatch).stepsPerSec, c.stepsPerSec),
      );
      out.beyondPollux.push(
        relativeError(pollux.predict(c.workers, c.servers, c.localBatch).stepsPerSec, c.stepsPerSec),
      );
    }
  }
  return out;
}

function paired(ours: readonly number[], pollux: readonly number[]): PairedErrors {
  return { ...summary(ours), baseline: summary(pollux), predictions: ours.length };
}

function closerShare(ours: readonly number[], pollux: readonly number[]): number {
  let closer = 0;
  ours.forEach((e, i) => {
    if (e < (pollux[i] as number)) closer += 1;
  });
  return ours.length > 0 ? closer / ours.length : Number.NaN;
}

/** Runs the protocol over every job of the data. */
export function evaluateAllReduceModels(
  data: AllReduceData,
  opts: AllReduceEvalOptions,
): AllReduceEvalResult {
  if (!Number.isInteger(opts.samples) || opts.samples < 1)
    throw new RangeError(`samples must be a positive integer, got ${opts.samples}`);
  if (!Number.isInteger(opts.seeds) || opts.seeds < 1)
    throw new RangeError(`seeds must be a positive integer, got ${opts.seeds}`);
  const models: Record<string, AllReduceModelEval> = {};
  const skippedModels: string[] = [];
  const all: Errors = { ours: [], pollux: [], beyondOurs: [], beyondPollux: [], covered: 0 };
  data.jobs.forEach((job, jobIndex) => {
    if (job.configurations.length <= opts.samples) {
      skippedModels.push(job.model);
      return;
    }
    const e = evalJob(job, jobIndex, opts);
    models[job.model] = {
      ...paired(e.ours, e.pollux),
      configurations: job.configurations.length,
      oursCloser: closerShare(e.ours, e.pollux),
      beyond: e.beyondOurs.length > 0 ? paired(e.beyondOurs, e.beyondPollux) : null,
    };
    all.ours.push(...e.ours);
    all.pollux.push(...e.pollux);
    all.beyondOurs.push(...e.beyondOurs);
    all.beyondPollux.push(...e.beyondPollux);
    all.covered += e.covered;
  });
  if (all.ours.length === 0)
    throw new RangeError(`no job has more than ${opts.samples} configurations: nothing to predict`);
  return {
    kind: 'allreduce',
    samples: opts.samples,
    seeds: opts.seeds,
    baselineName: 'pollux-throughput',
    ...paired(all.ours, all.pollux),
    oursCloser: closerShare(all.ours, all.pollux),
    intervalCoverage: all.covered / all.ours.length,
    models,
    beyond: all.beyondOurs.length > 0 ? paired(all.beyondOurs, all.beyondPollux) : null,
    skippedModels,
  };
}
