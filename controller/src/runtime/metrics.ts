/**
 * Prometheus metrics of the controller (prom-client). One registry per controller so
 * tests and several controllers in one process do not collide.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { JOB_STATES, type JobState } from './job-state';

export interface RuntimeMetrics {
  readonly registry: Registry;
  readonly messagesReceived: Counter;
  readonly messagesRejected: Counter<'reason'>;
  readonly recordsOutOfRange: Counter<'field'>;
  readonly fits: Counter<'model' | 'result'>;
  readonly decisionLatency: Histogram;
  readonly rounds: Counter;
  readonly planActions: Counter<'kind' | 'result'>;
  /** Failures isolated to one job, by the round stage that failed (refit, plan, rollout). */
  readonly jobErrors: Counter<'stage'>;
}

/** Live counts the registry reads when scraped. */
export interface MetricsSources {
  /** Jobs by state (runtime/job-state.ts: the phases, and `resizing` while a rollout runs). */
  readonly states: () => Partial<Record<JobState, number>>;
  /** Jobs marked degraded now, by stage. */
  readonly degraded?: () => Record<string, number>;
  /** Rollouts in flight now. */
  readonly inFlight?: () => number;
}

export function createMetrics(
  sources: MetricsSources | (() => Partial<Record<JobState, number>>),
): RuntimeMetrics {
  const src: MetricsSources = typeof sources === 'function' ? { states: sources } : sources;
  const registry = new Registry();
  const m: RuntimeMetrics = {
    registry,
    messagesReceived: new Counter({
      name: 'optimus_messages_received_total',
      help: 'Metrics records accepted from sidecars (after de-duplication)',
      registers: [registry],
    }),
    messagesRejected: new Counter({
      name: 'optimus_messages_rejected_total',
      help: 'Records and messages rejected, by reason (unknown-job: a record for a job the controller does not know)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    recordsOutOfRange: new Counter({
      name: 'optimus_records_out_of_range_total',
      help: 'Records refused because a figure lies outside its physical bounds, by field',
      labelNames: ['field'],
      registers: [registry],
    }),
    fits: new Counter({
      name: 'optimus_model_fits_total',
      help: 'Model fits, by model and result',
      labelNames: ['model', 'result'],
      registers: [registry],
    }),
    decisionLatency: new Histogram({
      name: 'optimus_decision_latency_seconds',
      help: 'Wall time of one scheduling round (snapshot → refit → decide → plan)',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    rounds: new Counter({
      name: 'optimus_rounds_total',
      help: 'Scheduling rounds run',
      registers: [registry],
    }),
    planActions: new Counter({
      name: 'optimus_plan_actions_total',
      help: 'Plan actions executed, by kind and result',
      labelNames: ['kind', 'result'],
      registers: [registry],
    }),
    jobErrors: new Counter({
      name: 'optimus_job_errors_total',
      help: 'Failures isolated to one job (the job is marked degraded, others go on), by stage',
      labelNames: ['stage'],
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'optimus_jobs_degraded',
    help: 'Jobs marked degraded now, by the stage that failed',
    labelNames: ['stage'],
    registers: [registry],
    collect() {
      const counts = src.degraded?.() ?? {};
      for (const stage of ['refit', 'plan', 'rollout']) this.set({ stage }, counts[stage] ?? 0);
    },
  });
  new Gauge({
    name: 'optimus_rollouts_in_flight',
    help: 'Rollouts dispatched to the executor and not yet confirmed or forgotten',
    registers: [registry],
    collect() {
      this.set(src.inFlight?.() ?? 0);
    },
  });
  new Gauge({
    name: 'optimus_jobs',
    help: 'Jobs by phase as observed (resizing: a rollout changes the shape, tasks restarting)',
    labelNames: ['phase'],
    registers: [registry],
    collect() {
      const counts = src.states();
      for (const p of JOB_STATES) this.set({ phase: p }, counts[p] ?? 0);
    },
  });
  return m;
}
