/**
 * Per-job Prometheus series, computed at scrape time from what the runtime knows (prom-client
 * `collect`), so they never lag and a removed job's series vanish with it.
 *
 * Labels, bounded: `job_namespace` and `job_name` (the jobs the controller knows; not `job` and
 * `namespace`, which Prometheus and the Prometheus Operator set on every scraped series), plus
 * `phase` (7 values: the phases and `resizing`), `bound` (value, lower, upper), `model`
 * (convergence, speed) and `reason` ({@link PENDING_REASONS}). A job that finished keeps only its
 * phase, progress and restarts. docs/metrics.md lists every series.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { type FittedCurve, fittedLoss } from '../models/convergence/fitted-curve';
import type { LossPoint } from '../models/convergence/types';
import type { Clock } from './clock';
import { entryState, planMessage, progressOf, type JobEntry } from './job-entry';
import { JOB_STATES } from './job-state';
import { shapeOf } from './rollout/target';

/** Why a job holds nothing, as a bounded label (the reason's words are in the API and dashboard). */
export const PENDING_REASONS = [
  'new',
  'pre-run-room',
  'does-not-fit',
  'queued',
  'resource-missing',
  'invalid',
  'other',
] as const;
export type PendingReason = (typeof PENDING_REASONS)[number];

/** Maps the runtime's and the policies' wait reasons onto {@link PENDING_REASONS}. */
export function pendingReason(reason: string | null): PendingReason {
  if (reason === null) return 'new';
  if (/room to pre-run/.test(reason)) return 'pre-run-room';
  if (/does not fit|can hold|no set of servers/.test(reason)) return 'does-not-fit';
  if (/queued behind/.test(reason)) return 'queued';
  if (/no server offers/.test(reason)) return 'resource-missing';
  if (/^invalid job/.test(reason)) return 'invalid';
  return 'other';
}

/** R² of the fitted curve on the points of its segment; null before a fit or with < 3 points. */
export function convergenceR2(
  points: readonly LossPoint[],
  fit: FittedCurve,
  fitStartStep = 0,
): number | null {
  const seg = points.filter((p) => p.step >= fitStartStep);
  if (seg.length < 3) return null;
  const mean = seg.reduce((a, p) => a + p.loss, 0) / seg.length;
  let sse = 0;
  let sst = 0;
  for (const p of seg) {
    sse += (p.loss - fittedLoss(fit, p.step - fitStartStep)) ** 2;
    sst += (p.loss - mean) ** 2;
  }
  return sst > 0 ? 1 - sse / sst : null;
}

const JOB = ['job_namespace', 'job_name'] as const;
const relativeWidth = (v: { value: number; lower: number; upper: number }): number | null =>
  v.value > 0 ? (v.upper - v.lower) / v.value : null;

/**
 * Admission-wait buckets, job seconds: a local demo's next round (tens of seconds) to a cluster
 * queue of a day.
 */
export const ADMISSION_WAIT_BUCKETS = [
  10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400, 43_200, 86_400,
];

export interface JobMetricsSources {
  readonly entries: () => Iterable<JobEntry>;
  readonly clock: () => Clock | null;
}

/** Observes each job's admission wait once: the controller calls it after loading and after each round. */
export interface AdmissionWaits {
  /** Jobs that had started before this controller ran: known, not observed (their wait was counted then). */
  seed(entries: Iterable<JobEntry>): void;
  /** Observes submission → first start of every job that started since the last call. */
  observe(entries: Iterable<JobEntry>, clock: Clock): void;
}

/** Registers the per-job series on `registry`; the sources are read at every scrape. */
export function registerJobMetrics(registry: Registry, src: JobMetricsSources): AdmissionWaits {
  // The first gauge collects for all: a scrape sees one consistent pass over the jobs.
  const collect = (): void => {
    const c = src.clock();
    for (const m of Object.values(g)) m.reset();
    restartsTotal.reset();
    if (c === null) return;
    for (const e of src.entries()) collectJob({ g, restartsTotal }, e, c);
  };
  let first = true;
  const gauge = <L extends string>(name: string, help: string, labels: readonly L[]) => {
    const o = { name, help, labelNames: [...JOB, ...labels], registers: [registry] };
    const made = new Gauge<(typeof JOB)[number] | L>(first ? { ...o, collect } : o);
    first = false;
    return made;
  };
  const g = {
    phase: gauge(
      'optimus_job_phase',
      '1 for the phase the job is in as observed (resizing: a rollout changes its shape)',
      ['phase'],
    ),
    ps: gauge('optimus_job_ps', 'Parameter servers the job runs now (while resizing: the shape it gets)', []),
    workers: gauge('optimus_job_workers', 'Workers the job runs now (while resizing: the shape it gets)', []),
    progress: gauge('optimus_job_progress_ratio', 'Steps done over predicted total steps (1 when done)', []),
    remaining: gauge(
      'optimus_job_predicted_remaining_seconds',
      'Predicted remaining job seconds at the current shape, with its interval',
      ['bound'],
    ),
    restarts: gauge(
      'optimus_job_restarts',
      'Deprecated, use optimus_job_restarts_total (the same value); removed in a later release',
      [],
    ),
    pending: gauge(
      'optimus_job_pending',
      '1 while the job holds nothing and no rollout gives it anything, labelled with why',
      ['reason'],
    ),
    r2: gauge(
      'optimus_job_fit_r_squared',
      'R² of the fitted convergence curve on the loss points it was fitted to',
      ['model'],
    ),
    width: gauge(
      'optimus_job_interval_relative_width',
      'Width of the prediction interval over the prediction (lower is more certain)',
      ['model'],
    ),
  };
  const restartsTotal = new Counter<(typeof JOB)[number]>({
    name: 'optimus_job_restarts_total',
    help: 'Checkpoint → restart cycles of the job so far (resizes, pre-run shape changes)',
    labelNames: [...JOB],
    registers: [registry],
  });
  const wait = new Histogram({
    name: 'optimus_admission_wait_seconds',
    help: 'Job seconds from submission to the first start of each job (its pre-run sample included)',
    buckets: ADMISSION_WAIT_BUCKETS,
    registers: [registry],
  });
  return admissionWaits(wait);
}

function admissionWaits(wait: Histogram): AdmissionWaits {
  const seen = new Set<string>();
  const key = (e: JobEntry): string =>
    `${e.rec.spec.namespace}/${e.rec.spec.name}/${e.rec.incarnation ?? ''}`;
  return {
    seed: (entries) => {
      for (const e of entries) if (e.rec.spans.length > 0) seen.add(key(e));
    },
    observe: (entries, clock) => {
      for (const e of entries) {
        const firstStart = e.rec.spans[0]?.since;
        if (firstStart === undefined || seen.has(key(e))) continue;
        seen.add(key(e));
        // Spans are stamped in wall ms; the job's clock turns them into job seconds.
        const startedAt = ((firstStart - clock.originMs) * clock.scale) / 1000;
        wait.observe(Math.max(0, startedAt - e.rec.submittedAt));
      }
    },
  };
}

type Gauges = Record<
  'phase' | 'ps' | 'workers' | 'progress' | 'remaining' | 'restarts' | 'pending' | 'r2' | 'width',
  Gauge<string>
>;

interface Collectors {
  readonly g: Gauges;
  readonly restartsTotal: Counter<string>;
}

function collectJob({ g, restartsTotal }: Collectors, e: JobEntry, clock: Clock): void {
  const { rec, models } = e;
  const job = { job_namespace: rec.spec.namespace, job_name: rec.spec.name };
  const state = entryState(e);
  for (const phase of JOB_STATES) g.phase.set({ ...job, phase }, state === phase ? 1 : 0);
  g.restarts.set(job, rec.restarts);
  restartsTotal.inc(job, rec.restarts);
  const progress = progressOf(e);
  if (progress !== null) g.progress.set(job, progress);
  if (rec.phase === 'done' || rec.phase === 'failed') return;
  // Mid-rollout the job is scraped at the shape it is being given, never as `ps 0`.
  const shape = (state === 'resizing' && rec.target ? shapeOf(rec.target) : null) ?? e.current?.shape;
  g.ps.set(job, shape?.ps ?? 0);
  g.workers.set(job, shape?.workers ?? 0);
  if (e.current === null && state !== 'resizing')
    g.pending.set({ ...job, reason: pendingReason(rec.reason) }, 1);
  const rt = planMessage(e, clock).predictedRemainingSec;
  if (rt)
    for (const bound of ['value', 'lower', 'upper'] as const) g.remaining.set({ ...job, bound }, rt[bound]);
  const c = models?.convergence;
  if (c?.status === 'ok') {
    const r2 = convergenceR2(e.obs.lossPoints(), c, c.fitStartStep ?? 0);
    if (r2 !== null) g.r2.set({ ...job, model: 'convergence' }, r2);
    const w = relativeWidth({ value: c.predictedTotalSteps, lower: c.lower, upper: c.upper });
    if (w !== null) g.width.set({ ...job, model: 'convergence' }, w);
  }
  if (models?.speedFitted && e.current) {
    const s = models.speed.predict(e.current.shape.ps, e.current.shape.workers);
    const w = relativeWidth({ value: s.stepsPerSec, lower: s.lower, upper: s.upper });
    if (w !== null) g.width.set({ ...job, model: 'speed' }, w);
  }
}
