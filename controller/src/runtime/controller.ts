/**
 * The controller runtime: ingest → per-job state → rounds → publish. Backend-agnostic;
 * a composition root passes the backend, the store, the publisher and the pure core.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { CONTROLLER_STATUS_TOPIC, planTopic, type TaskId } from '../../../shared/src/topics';
import type { Backend, JobOutcome, RuntimeDocument, StateStore, StoredRecord } from './backend';
import type { Clock } from './clock';
import type { Core, CurrentJob } from './core';
import { EventHub } from './events';
import { Ingest, type SinkOutcome } from './ingest';
import { jobReport, jobView, planMessage, type JobEntry } from './job-entry';
import {
  isOwnRecord,
  JOB_PHASES,
  newJobRecord,
  startSpan,
  type JobPhase,
  type JobRecord,
} from './job-record';
import { jobIdOf, type JobSpec } from './job-spec';
import { createMetrics, type RuntimeMetrics } from './metrics';
import { JobObservations } from './observations';
import { remainingTime, refitJob } from './refit';
import { runRound, type RoundKind } from './round';

const OFFLINE_PUBLISH_TIMEOUT_MS = 1000;

/** Publishes to the broker; the MQTT adapter implements it. */
export interface Publisher {
  publish(topic: string, payload: string, opts: { retain: boolean }): Promise<void>;
}

export interface ControllerOptions {
  readonly core: Core;
  readonly backend: Backend;
  readonly store: StateStore;
  readonly publisher: Publisher;
  /** Builds the clock from the persisted origin (or a new one). */
  readonly clock: (originMs: number | null) => Clock;
  readonly log: Logger;
  readonly id: string;
  readonly schedulingIntervalSec: number;
  readonly restartCostSec: number;
  readonly preRunBudget?: number;
  readonly preRunRecordsPerWorker?: number;
}

/** Thrown for a client mistake (unknown job, duplicate); the HTTP layer maps it to 4xx. */
export class RuntimeError extends Error {
  constructor(
    readonly status: 404 | 409 | 400,
    message: string,
  ) {
    super(message);
  }
}

export class Controller {
  readonly events = new EventHub();
  readonly metrics: RuntimeMetrics;
  readonly ingest: Ingest;
  private readonly entries = new Map<string, JobEntry>();
  /** Ids between the duplicate check and the entry (the backend's admit is async). */
  private readonly admitting = new Set<string>();
  private clockValue: Clock | null = null;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private pending: { kind: RoundKind; timer: NodeJS.Timeout } | null = null;
  private decisions = 0;
  private roundNo = 0;
  private stopped = false;
  private replaying = false;
  ready = false;

  constructor(private readonly o: ControllerOptions) {
    this.metrics = createMetrics(() => this.phaseCounts());
    this.ingest = new Ingest(
      { onRecord: (t, r) => this.onRecord(t, r, !this.replaying), onStatus: () => {} },
      (reason, topic, detail, field) => {
        this.metrics.messagesRejected.inc({ reason });
        if (reason === 'out-of-range' && field) this.metrics.recordsOutOfRange.inc({ field });
        this.o.log.debug({ reason, topic, detail }, 'message rejected');
      },
      (err) => this.o.log.warn({ err }, 'a valid record could not be used'),
    );
  }

  get clock(): Clock {
    if (!this.clockValue) throw new Error('controller not started');
    return this.clockValue;
  }

  /** Loads the store, reconciles with what the backend runs, and starts the round timer. */
  async start(running: ReadonlyMap<string, CurrentJob>): Promise<void> {
    const { doc, records } = await this.o.store.load();
    this.clockValue = this.o.clock(doc?.originMs ?? null);
    this.decisions = doc?.decisions ?? 0;
    for (const rec of doc?.jobs ?? [])
      this.entries.set(jobIdOf(rec.spec), { rec, obs: new JobObservations(rec.spec), models: null });
    for (const e of this.entries.values()) await this.o.backend.admit(e.rec.spec);
    const stale = this.replay(records);
    this.reconcile(running);
    this.o.backend.attach({ onJobFinished: (id, outcome) => this.onJobFinished(id, outcome) });
    await this.publishStatus('online');
    const periodMs = (this.o.schedulingIntervalSec * 1000) / this.clock.scale;
    this.timer = setInterval(() => this.requestRound('full', 0), periodMs);
    this.ready = true;
    this.o.log.info(
      { jobs: this.entries.size, records: records.length, stale, periodMs },
      'controller started',
    );
    this.requestRound('full', 0);
  }

  /** A message from the broker. Never throws. */
  handleMessage(topic: string, payload: Uint8Array): void {
    const before = this.ingest.counters().received;
    this.ingest.handle(topic, payload);
    // A v2 message carries several records: count each accepted one.
    const added = this.ingest.counters().received - before;
    if (added > 0) this.metrics.messagesReceived.inc(added);
  }

  async submit(spec: JobSpec): Promise<Record<string, unknown>> {
    const id = jobIdOf(spec);
    if (this.entries.has(id) || this.admitting.has(id))
      throw new RuntimeError(409, `job ${id} already exists`);
    this.admitting.add(id);
    try {
      await this.o.backend.admit(spec, { fresh: true });
    } finally {
      this.admitting.delete(id);
    }
    const entry: JobEntry = {
      rec: newJobRecord(spec, this.clock.now(), randomUUID()),
      obs: new JobObservations(spec),
      models: null,
    };
    this.entries.set(id, entry);
    this.jobChanged(entry);
    this.requestRound('pre-run');
    // Durable before it is acknowledged: a crash right after the answer still knows the job.
    await this.save();
    return jobView(entry, this.clock);
  }

  async remove(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e) throw new RuntimeError(404, `job ${id} not found`);
    await this.o.backend.remove(id);
    this.entries.delete(id);
    // A job submitted again under this name starts its sidecars' seqs from 0 again.
    this.ingest.forgetJob(e.rec.spec.namespace, e.rec.spec.name);
    const topic = planTopic({ namespace: e.rec.spec.namespace, job: e.rec.spec.name });
    // Clears the retained plan; not awaited, like every publish outside start-up (see round()).
    void this.o.publisher
      .publish(topic, '', { retain: true })
      .catch((err: unknown) => this.o.log.warn({ err, topic }, 'publish failed'));
    this.events.emit({ type: 'job', id, phase: 'removed', ts: this.clock.wallMs() });
    await this.save();
    // Only now: a crash before the save above still has the job, so it must still have its records.
    try {
      this.o.store.purgeJob?.(id, e.rec.incarnation);
    } catch (err) {
      this.o.log.warn({ err, job: id }, 'purging the records of a removed job failed');
    }
    this.requestRound('full');
  }

  list(): Record<string, unknown>[] {
    return [...this.entries.values()].map((e) => jobView(e, this.clock));
  }

  get(id: string): Record<string, unknown> {
    const e = this.entries.get(id);
    if (!e) throw new RuntimeError(404, `job ${id} not found`);
    return jobView(e, this.clock);
  }

  /** Predicted remaining job seconds of `id` at a shape. */
  whatIf(id: string, ps: number, workers: number): Record<string, unknown> {
    const e = this.entries.get(id);
    if (!e) throw new RuntimeError(404, `job ${id} not found`);
    const models = e.models ?? refitJob(this.o.core, e.rec, e.obs);
    return {
      id,
      shape: { ps, workers },
      predictedRemainingSec: remainingTime(models, { ps, workers }),
      stepsPerSec: models.speed.predict(ps, workers),
      remainingSteps: models.remaining,
      fitted: models.speedFitted && models.convergence.status === 'ok',
    };
  }

  records(): readonly JobRecord[] {
    return [...this.entries.values()].map((e) => e.rec);
  }

  get decisionCount(): number {
    return this.decisions;
  }

  allDone(): boolean {
    return (
      this.entries.size > 0 &&
      [...this.entries.values()].every((e) => e.rec.phase === 'done' || e.rec.phase === 'failed')
    );
  }

  /** Stops rounds, waits for the one in flight, saves, and marks the controller offline. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ready = false;
    if (this.timer) clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending.timer);
    await this.chain;
    await this.save();
    // Bounded: with the broker down the ack never comes, and shutdown must not hang on it
    // (the broker publishes our Last Will anyway).
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, OFFLINE_PUBLISH_TIMEOUT_MS)));
    await Promise.race([this.publishStatus('offline').catch(() => {}), timeout]);
    clearTimeout(timer);
  }

  /** Asks for a round soon; rounds never overlap, and a full request upgrades a pre-run one. */
  requestRound(kind: RoundKind, delayMs = 100): void {
    if (this.stopped) return;
    if (this.pending) {
      if (kind === 'full') this.pending.kind = 'full';
      return;
    }
    const timer = setTimeout(() => {
      const k = this.pending?.kind ?? kind;
      this.pending = null;
      this.chain = this.chain
        .then(() => this.round(k))
        .catch((err: unknown) => this.o.log.error({ err }, 'round failed'));
    }, delayMs);
    this.pending = { kind, timer };
  }

  /** Runs a round now (after any in flight) and resolves when it is done; for tests and tools. */
  async roundNow(kind: RoundKind): Promise<void> {
    const run = this.chain.then(() => this.round(kind));
    // The caller gets the failure; the chain must not keep it, or later rounds and stop() would.
    this.chain = run.catch(() => {});
    await run;
  }

  private async round(kind: RoundKind): Promise<void> {
    if (this.stopped) return;
    const outcome = await runRound(
      {
        core: this.o.core,
        backend: this.o.backend,
        clock: this.clock,
        entries: this.entries,
        restartCostSec: this.o.restartCostSec,
        preRunBudget: this.o.preRunBudget ?? 4,
        preRunRecordsPerWorker: this.o.preRunRecordsPerWorker ?? 3,
        metrics: this.metrics,
      },
      kind,
    );
    this.roundNo += 1;
    if (kind === 'full') this.decisions += 1;
    for (const f of outcome.result.failed)
      this.o.log.warn({ action: f.action, error: f.error }, 'plan action failed');
    if (outcome.actions.length > 0) {
      this.o.log.info(
        { round: this.roundNo, kind, actions: outcome.actions.map(describe) },
        'round executed',
      );
      this.events.emit({
        type: 'decision',
        round: this.roundNo,
        actions: outcome.result.applied,
        ts: this.clock.wallMs(),
      });
    }
    // Not awaited: a QoS 1 publish waits for the broker's ack, and a broker outage must not stop
    // scheduling. Calls are made in order, so the retained plans still end on this round's.
    for (const e of this.entries.values()) void this.publishPlan(e);
    this.reportJobs();
    await this.save();
    if (outcome.needsFullRound) this.requestRound('full');
  }

  /**
   * Rebuilds observations and de-duplication from the store. Records of jobs no longer known, or
   * of an earlier job under the same name (another incarnation), are skipped. Returns how many.
   */
  private replay(records: readonly StoredRecord[]): number {
    let stale = 0;
    this.replaying = true;
    for (const r of records) {
      const e = this.entries.get(`${r.task.namespace}/${r.task.job}`);
      if (e && isOwnRecord(e.rec, r)) this.ingest.replay(r.task, r.record);
      else stale += 1;
    }
    this.replaying = false;
    return stale;
  }

  private onRecord(task: TaskId, record: MetricsRecord, live: boolean): SinkOutcome {
    const e = this.entries.get(`${task.namespace}/${task.job}`);
    // Counted by the ingest (`unknown-job`), not stored: the sidecar keeps it and sends it again.
    if (!e) return 'unknown-job';
    const { incarnation } = e.rec;
    if (live) this.o.store.appendRecord({ task, record, ...(incarnation !== undefined && { incarnation }) });
    e.obs.add(task, record, e.rec.spans);
    if (live && e.rec.phase === 'pre-run' && e.rec.current) {
      const target = (this.o.preRunRecordsPerWorker ?? 3) * e.rec.current.shape.workers;
      if (e.obs.samplesInSpan(e.rec.spans.length - 1) >= target) this.requestRound('pre-run', 50);
    }
    return 'stored';
  }

  private onJobFinished(id: string, outcome: JobOutcome): void {
    const e = this.entries.get(id);
    if (!e || e.rec.phase === 'done' || e.rec.phase === 'failed') return;
    e.rec.phase = outcome === 'succeeded' ? 'done' : 'failed';
    e.rec.finishedAt = this.clock.now();
    e.rec.current = null;
    startSpan(e.rec, null, this.clock.wallMs(), false);
    this.o.log.info({ job: id, outcome, jct: e.rec.finishedAt - e.rec.submittedAt }, 'job finished');
    this.jobChanged(e);
    this.requestRound('full');
  }

  /** After a restart: what the backend really runs wins over what the store remembers. */
  private reconcile(running: ReadonlyMap<string, CurrentJob>): void {
    for (const [id, e] of this.entries) {
      if (e.rec.phase === 'done' || e.rec.phase === 'failed') continue;
      const now = running.get(id) ?? null;
      if (now === null && e.rec.current) {
        e.rec.current = null;
        startSpan(e.rec, null, this.clock.wallMs(), false);
        if (e.rec.phase === 'pre-run') [e.rec.phase, e.rec.preRun] = ['pending', null];
      }
    }
  }

  private jobChanged(e: JobEntry): void {
    this.events.emit({ type: 'job', id: jobIdOf(e.rec.spec), phase: e.rec.phase, ts: this.clock.wallMs() });
    void this.publishPlan(e).then(() => this.save());
  }

  private async publishPlan(e: JobEntry): Promise<void> {
    const topic = planTopic({ namespace: e.rec.spec.namespace, job: e.rec.spec.name });
    await this.o.publisher
      .publish(topic, JSON.stringify(planMessage(e, this.clock)), { retain: true })
      .catch((err: unknown) => this.o.log.warn({ err, topic }, 'publish failed'));
  }

  /** Once per round, to backends that show progress (optional port method; never fails a round). */
  private reportJobs(): void {
    if (!this.o.backend.reportJobs) return;
    try {
      this.o.backend.reportJobs([...this.entries.values()].map((e) => jobReport(e, this.clock)));
    } catch (err) {
      this.o.log.warn({ err }, 'reporting jobs to the backend failed');
    }
  }

  private async publishStatus(state: 'online' | 'offline'): Promise<void> {
    const msg = { v: 1, state, ts: Date.now(), id: this.o.id };
    await this.o.publisher.publish(CONTROLLER_STATUS_TOPIC, JSON.stringify(msg), { retain: true });
  }

  private async save(): Promise<void> {
    if (!this.clockValue) return;
    const doc: RuntimeDocument = {
      v: 1,
      originMs: this.clock.originMs,
      decisions: this.decisions,
      jobs: this.records(),
    };
    await this.o.store
      .saveDocument(doc)
      .catch((err: unknown) => this.o.log.error({ err }, 'saving state failed'));
  }

  private phaseCounts(): Record<JobPhase, number> {
    const counts = Object.fromEntries(JOB_PHASES.map((p) => [p, 0])) as Record<JobPhase, number>;
    for (const e of this.entries.values()) counts[e.rec.phase] += 1;
    return counts;
  }
}

function describe(a: { kind: string; jobId: string; shape?: { ps: number; workers: number } }): string {
  return `${a.kind} ${a.jobId}${a.shape ? ` ${a.shape.ps}x${a.shape.workers}` : ''}`;
}
