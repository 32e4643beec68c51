/**
 * What the real-torch tests judge, from the log lines as the sidecar parses them and as the
 * controller's observations (runtime/observations.ts, unchanged) read those records.
 */
import { mean, standardDeviation } from 'simple-statistics';
import { JobObservations, type ShapeSpan } from '../../controller/src/runtime/observations';
import { jobSpecSchema } from '../../controller/src/runtime/job-spec';
import type { DraftRecord } from '../../sidecar/src/parse/assembler';
import { globalStep, type Generation } from './harness';

export const batches = (records: readonly DraftRecord[]): DraftRecord[] =>
  records.filter((r) => r.kind === 'batch');
export const checkpointsOf = (records: readonly DraftRecord[]): DraftRecord[] =>
  records.filter((r) => r.kind === 'checkpoint');

/** Worker 0's batch records of each generation, in order. */
export const workerZeroBatches = (gens: readonly Generation[]): DraftRecord[][] =>
  gens.map((g) => batches(g.worker0.records()));

/** 1, 2, …, n. */
export const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

export interface ControllerView {
  /** The furthest global step the controller counts. */
  readonly stepsDone: number;
  /** The steps at which it holds a loss of worker 0. */
  readonly lossSteps: readonly number[];
}

/**
 * Feeds worker 0's records of each generation to the controller's JobObservations, one shape span
 * per generation, as the runtime would after each resize.
 */
export function controllerView(
  job: { mode: 'sync' | 'async'; batchSize: number; stepsPerEpoch: number },
  gens: readonly Generation[],
): ControllerView {
  const spec = jobSpecSchema.parse({ name: 'torch', ...job, psDemand: { cpu: 1 }, workerDemand: { cpu: 1 } });
  const observations = new JobObservations(spec);
  const spans: ShapeSpan[] = gens.map((g, i) => ({
    shape: { ps: g.shape.ps, workers: g.shape.workers },
    since: i * 1e6,
    until: (i + 1) * 1e6,
    fitted: false,
  }));
  let seq = 0;
  gens.forEach((g, i) => {
    for (const r of g.worker0.records()) {
      seq += 1;
      const task = { namespace: 'default', job: 'torch', role: 'worker' as const, index: 0 };
      observations.add(task, { ...r, v: 1, seq, ts: i * 1e6 + seq }, spans);
    }
  });
  return { stepsDone: observations.stepsDone(), lossSteps: observations.lossPoints().map((p) => p.step) };
}

export interface LossJump {
  /** Mean loss of the first records after the resume minus that of the last ones before the stop. */
  readonly jump: number;
  /** Standard deviation of the per-record losses before the stop (the noise a jump is judged by). */
  readonly noise: number;
  readonly before: number;
  readonly after: number;
}

/** The loss across one resize, judged over `n` records each side. */
export function lossJump(
  before: readonly { readonly loss: number | null }[],
  after: readonly { readonly loss: number | null }[],
  n = 5,
): LossJump {
  const tail = before.slice(-Math.max(n, 2)).map((r) => r.loss ?? Number.NaN);
  const head = after.slice(0, n).map((r) => r.loss ?? Number.NaN);
  return {
    jump: mean(head) - mean(tail),
    noise: standardDeviation(tail),
    before: mean(tail),
    after: mean(head),
  };
}

/** The global step of every record in log order. */
export const stepsOf = (records: readonly DraftRecord[]): number[] => records.map(globalStep);
