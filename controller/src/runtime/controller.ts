/**
 * The controller runtime: ingest → per-job state → rounds → publish. Backend-agnostic;
 * a composition root passes the backend, the store, the publisher and the pure core.
 */
import { randomUUID } from 'node:crypto';
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { ConvergenceEstimate, LossPoint } from '../models/convergence/types';
import { CONTROLLER_STATUS_TOPIC, planTopic, type TaskId } from '../../../shared/src/topics';
import type { RuntimeDocument } from './backend';
import type { Clock } from './clock';
import { realTimers } from './real-timers';
import { Coalesced } from './coalesced';
import { EventHub } from './events';
import { neverFits } from './fit-check';
import type { Ingest } from './ingest';
import { jobReport, jobView, newEntry, type JobEntry, type ObservedRecord } from './job-entry';
import { newJobRecord, normalizeRecord, type DegradedStage, type JobRecord } from './job-record';
import { degradedCounts, stateCounts, whatIf } from './job-queries';
import { jobIdOf, type JobSpec } from './job-spec';
import { registerJobMetrics, type AdmissionWaits } from './job-metrics';
import { createMetrics, type RuntimeMetrics } from './metrics';
import { JobObservations } from './observations';
import { PlanPublisher } from './plan-publisher';
import type { JobModels } from './refit';
import { isTerminal } from './reconcile';
import { PRE_RUN_DEFAULTS } from './pre-run';
import { runRound, type RoundContext, type RoundKind } from './round';
import { RoundScheduler } from './round-scheduler';
import { degradeJob, healJob } from './job-health';
import { isInFlight } from './rollout/in-flight';
import { medianCost } from './rollout/restart-cost';
import type { RolloutFigures } from './rollout/rollout-stats';
import { Rollouts } from './rollout/rollouts';
import { describeAction } from './rollout/target';
import { countedIngest, TelemetrySink } from './telemetry-sink';
import { withTimeout } from './with-timeout';
import type { ControllerOptions } from './controller-options';
import { RuntimeError } from './controller-options';

const OFFLINE_PUBLISH_TIMEOUT_MS = 1000;
/** How long stopping waits for the executor steps under way to return. */
const STOP_ROLLOUTS_TIMEOUT_MS = 10_000;
/** Wall ms between two looks at the rollouts in flight while `settled()` waits for them. */
const SETTLE_POLL_MS = 20;

export { RuntimeError, type ControllerOptions, type Publisher } from './controller-options';

export class Controller {
  readonly events = new EventHub();
  readonly metrics: RuntimeMetrics;
  readonly ingest: Ingest;
  private readonly entries = new Map<string, JobEntry>();
  /** Ids between the duplicate check and the entry (the backend's admit is async). */
  private readonly admitting = new Set<string>();
  private clockValue: Clock | null = null;
  private rounds: RoundScheduler | null = null;
  private rollouts: Rollouts | null = null;
  /** Each job's target generation as of the last save that succeeded: a step waits for its target to be durable. */
  private readonly saved = new Map<string, number>();
  private readonly plans: PlanPublisher;
  private readonly preRun: RoundContext['preRun'];
  private readonly saves = new Coalesced(() => this.saveNow());
  private decisions = 0;
  private roundNo = 0;
  private stopped = false;
  private readonly telemetry: TelemetrySink;
  private readonly admissionWaits: AdmissionWaits;
  ready = false;

  constructor(private readonly o: ControllerOptions) {
    this.metrics = createMetrics({
      states: () => stateCounts(this.entries.values()),
      degraded: () => degradedCounts(this.entries.values()),
      inFlight: () => [...this.entries.values()].filter(isInFlight).length,
    });
    this.admissionWaits = registerJobMetrics(this.metrics.registry, {
      entries: () => this.entries.values(),
      clock: () => this.clockValue,
    });
    // A policy that never reads the speed model does not make a job pay for seeding one.
    this.preRun = {
      ...PRE_RUN_DEFAULTS,
      ...o.preRun,
      ...(o.core.policy.needsSpeedModel === false ? { budget: 0 } : {}),
    };
    this.plans = new PlanPublisher(o.publisher, (err, topic) => o.log.warn({ err, topic }, 'publish failed'));
    this.telemetry = new TelemetrySink({
      entries: this.entries,
      store: o.store,
      recordsPerWorker: this.preRun.recordsPerWorker,
      clock: () => this.clock,
      requestRound: (kind, delayMs) => this.requestRound(kind, delayMs),
      onRecord: (e, r) => this.rollouts?.onRecord(e, r),
      log: o.log,
    });
    this.ingest = countedIngest(this.telemetry, this.metrics, o.log);
  }

  get clock(): Clock {
    if (!this.clockValue) throw new Error('controller not started');
    return this.clockValue;
  }

  /**
   * Loads the store and starts the rounds. Nothing the store says about what runs is trusted: the
   * first round starts from what the backend observes.
   */
  async start(): Promise<void> {
    const { doc, records } = await this.o.store.load();
    this.clockValue = this.o.clock(doc?.originMs ?? null);
    this.decisions = doc?.decisions ?? 0;
    for (const raw of doc?.jobs ?? []) {
      const rec = normalizeRecord(raw);
      this.entries.set(jobIdOf(rec.spec), newEntry(rec, new JobObservations(rec.spec)));
      // Read back from the store: durable as it is (a rollout in flight goes on from its target).
      if (rec.target) this.saved.set(jobIdOf(rec.spec), rec.target.generation);
    }
    for (const e of this.entries.values()) await this.o.backend.admit(e.rec.spec);
    this.admissionWaits.seed(this.entries.values());
    const stale = this.telemetry.replay(records, this.ingest);
    const timers = this.o.timers ?? realTimers;
    const clock = this.clock;
    this.rollouts = new Rollouts({
      executor: this.o.backend.executor,
      clock: () => this.clock,
      timers,
      maxInFlight: this.o.rolloutConcurrency ?? 8,
      timeoutMs: ((this.o.rolloutTimeoutSec ?? 900) * 1000) / clock.scale,
      pollMs: this.o.rolloutPollMs ?? 2000,
      metrics: this.metrics,
      log: this.o.log,
      events: this.events,
      roundNo: () => this.roundNo,
      durable: (e) => (this.saved.get(jobIdOf(e.rec.spec)) ?? 0) >= (e.rec.target?.generation ?? 0),
      degrade: (e, stage, reason) => this.degrade(e, stage, reason),
      jobChanged: (e) => this.jobChanged(e),
      requestRound: (kind, delayMs) => this.requestRound(kind, delayMs),
      stopped: () => this.stopped,
    });
    this.rounds = new RoundScheduler({
      timers,
      periodMs: (this.o.schedulingIntervalSec * 1000) / clock.scale,
      run: (kind) => this.round(kind),
      onError: (err) => this.o.log.error({ err }, 'round failed'),
      minFullGapMs: ((this.o.minRoundGapSec ?? 0) * 1000) / clock.scale,
      nowMs: () => clock.wallMs(),
    });
    // A change the backend sees (a task exited, a pod vanished) is read in the next round.
    this.o.backend.attach({ changed: () => this.requestRound('pre-run', 200) });
    await this.publishStatus('online');
    this.ready = true;
    this.o.log.info({ jobs: this.entries.size, records: records.length, stale }, 'controller started');
    this.rounds.start();
  }

  /** A message from the broker. Never throws. */
  handleMessage(topic: string, payload: Uint8Array): void {
    const before = this.ingest.counters().received;
    this.ingest.handle(topic, payload);
    // A v2 message carries several records: count each accepted one.
    const added = this.ingest.counters().received - before;
    if (added > 0) this.metrics.messagesReceived.inc(added);
  }

  /** A record from an in-process producer (the simulator): the same ingest, without the bytes. */
  ingestRecord(task: TaskId, record: MetricsRecord): void {
    if (this.ingest.accept(task, record) === 'accepted') this.metrics.messagesReceived.inc();
  }

  /** The latest models of a job (null before its first fit or when unknown); read-only. */
  modelsOf(id: string): JobModels | null {
    return this.entries.get(id)?.models ?? null;
  }

  async submit(spec: JobSpec): Promise<Record<string, unknown>> {
    const id = jobIdOf(spec);
    if (this.entries.has(id) || this.admitting.has(id))
      throw new RuntimeError(409, `job ${id} already exists`);
    this.admitting.add(id);
    try {
      const unfit = neverFits(spec, (await this.o.backend.observe()).servers);
      if (unfit !== null) throw new RuntimeError(422, `job ${id} can never run: ${unfit}`);
      await this.o.backend.admit(spec, { fresh: true });
    } finally {
      this.admitting.delete(id);
    }
    const entry = newEntry(newJobRecord(spec, this.clock.now(), randomUUID()), new JobObservations(spec));
    this.entries.set(id, entry);
    this.jobChanged(entry);
    this.requestRound('pre-run');
    // Durable before it is acknowledged: a crash right after the answer still knows the job.
    await this.save();
    return this.view(entry);
  }

  async remove(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e) throw new RuntimeError(404, `job ${id} not found`);
    this.entries.delete(id);
    this.saved.delete(id);
    // A step of the job under way is left to return (its outcome is dropped): then it goes.
    await this.rollouts?.forget(id);
    await this.o.backend.remove(id);
    // A job submitted again under this name starts its sidecars' seqs from 0 again.
    this.ingest.forgetJob(e.rec.spec.namespace, e.rec.spec.name);
    const topic = planTopic({ namespace: e.rec.spec.namespace, job: e.rec.spec.name });
    // Clears the retained plan; not awaited, like every publish outside start-up (see round()).
    this.plans.clear(topic);
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
    return [...this.entries.values()].map((e) => this.view(e));
  }

  get(id: string): Record<string, unknown> {
    return this.view(this.entryOf(id));
  }

  /**
   * True while a rollout of the job is in flight (observed ≠ target, ADR 0035): the one input a
   * view needs to show the job as `resizing` (`rollout/in-flight.ts`, `apiPhase`).
   */
  inFlight(id: string): boolean {
    return isInFlight(this.entryOf(id));
  }

  /** Figures of the rollouts so far (latency, in-flight window, measured restart costs). */
  rolloutFigures(): RolloutFigures | null {
    return this.rollouts?.stats.figures() ?? null;
  }

  private view(e: JobEntry): Record<string, unknown> {
    return jobView(e, { clock: this.clock, restartPriorSec: this.restartPriorOf(e) });
  }

  /** What a restart costs the job before it has measured one (a constant for now; see ControllerOptions). */
  private restartPriorOf(e: JobEntry): number {
    return this.o.restartPrior?.(e.rec.spec) ?? this.o.restartCostSec;
  }

  /** What the policy weighs as the job's restart cost: its measured median, else the prior. */
  private restartCostOf(e: JobEntry): number {
    return medianCost(e.rec.restartCost) ?? this.restartPriorOf(e);
  }

  /** Predicted remaining job seconds of `id` at a shape. */
  whatIf(id: string, ps: number, workers: number): Record<string, unknown> {
    return whatIf(this.o.core, id, this.entryOf(id), ps, workers);
  }

  /** Read-only: a job's loss points by step and its latest convergence fit (dashboard, per-job metrics). */
  convergenceData(id: string): { lossPoints: readonly LossPoint[]; estimate: ConvergenceEstimate | null } {
    const e = this.entryOf(id);
    return { lossPoints: e.obs.lossPoints(), estimate: e.models?.convergence ?? null };
  }

  /** Every job's record with what it holds as last observed, and whether a rollout of it is in flight. */
  observedRecords(): readonly ObservedRecord[] {
    return [...this.entries.values()].map((e) => ({ ...e.rec, current: e.current, inFlight: isInFlight(e) }));
  }

  records(): readonly JobRecord[] {
    return [...this.entries.values()].map((e) => e.rec);
  }

  private entryOf(id: string): JobEntry {
    const e = this.entries.get(id);
    if (!e) throw new RuntimeError(404, `job ${id} not found`);
    return e;
  }

  get decisionCount(): number {
    return this.decisions;
  }

  /**
   * True once every job is over and wound up: its end recorded by the backend and nothing of it
   * running any more (a sidecar still delivering its last records counts as running).
   */
  allDone(): boolean {
    return (
      this.entries.size > 0 &&
      [...this.entries.entries()].every(
        ([id, e]) => isTerminal(e) && e.wound && !isInFlight(e) && !this.rollouts?.stepBusy(id),
      )
    );
  }

  /**
   * Stops rounds, waits for the one in flight and for the executor steps under way (bounded), saves,
   * and marks the controller offline. Rollouts in flight stay so: their targets are durable, and the
   * next controller steps on.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ready = false;
    await this.rounds?.stop();
    await this.rollouts?.drain(STOP_ROLLOUTS_TIMEOUT_MS);
    await this.save();
    // Bounded: with the broker down the ack never comes, and shutdown must not hang on it
    // (the broker publishes our Last Will anyway).
    await withTimeout(
      this.publishStatus('offline').catch(() => {}),
      OFFLINE_PUBLISH_TIMEOUT_MS,
    );
  }

  /** Asks for a round soon; rounds never overlap, and a full request upgrades a pre-run one. */
  requestRound(kind: RoundKind, delayMs = 100): void {
    if (!this.stopped) this.rounds?.request(kind, delayMs);
  }

  /** Runs a round now (after any in flight) and resolves when it is done; for tests and tools. */
  async roundNow(kind: RoundKind): Promise<void> {
    if (!this.rounds) throw new Error('controller not started');
    await this.rounds.now(kind);
  }

  /**
   * Resolves when no round runs or waits to run now and no executor step is under way. Rollouts may
   * still be in flight (they take the time the cluster takes): the simulator moves time on from here.
   */
  async idle(): Promise<void> {
    for (let i = 0; i < 100; i += 1) {
      await this.rounds?.drained();
      await this.rollouts?.idle();
      await this.rounds?.drained();
      if (!(this.rollouts?.busy() ?? false)) return;
    }
  }

  /**
   * Resolves once no rollout waits on the cluster (each reached its target, was given up at its
   * deadline, or waits out a failure backoff) and the controller is idle: for tests and tools on a
   * real clock. Looks again every few ms, running a light round each time (what the backend
   * observes may have moved).
   */
  async settled(): Promise<void> {
    await this.idle();
    for (;;) {
      const rollouts = this.rollouts;
      const waiting = rollouts !== null && [...this.entries.values()].some((e) => rollouts.waiting(e));
      if (!waiting || this.stopped || !this.rounds) return;
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
      await this.rounds.now('pre-run');
      await this.idle();
    }
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
        restartCostOf: (e) => this.restartCostOf(e),
        preRun: this.preRun,
        metrics: this.metrics,
        rollouts: this.rollouts!,
        degrade: (e, stage, reason) => this.degrade(e, stage, reason),
        heal: (e, stage) => healJob(e, stage),
      },
      kind,
    );
    this.roundNo += 1;
    if (kind === 'full') this.decisions += 1;
    for (const { jobId, end } of outcome.ended) {
      const e = this.entries.get(jobId);
      this.o.log.info(
        { job: jobId, ...end, jct: e ? e.rec.finishedAt! - e.rec.submittedAt : null },
        'job ended',
      );
      if (e) this.jobChanged(e);
    }
    if (outcome.dispatched.length > 0)
      this.o.log.info(
        { round: this.roundNo, kind, actions: outcome.dispatched.map(describeAction) },
        'round dispatched',
      );
    // Not awaited: a QoS 1 publish waits for the broker's ack, and a broker outage must not stop
    // scheduling. Only plans that changed are sent (a finished job's plan is sent once).
    for (const e of this.entries.values()) this.plans.publish(e, this.clock);
    this.admissionWaits.observe(this.entries.values(), this.clock);
    this.reportJobs();
    // The targets written this round are durable before anything steps toward them.
    await this.save();
    this.rollouts?.step(this.entries.values(), outcome.observation);
    if (outcome.needsFullRound || outcome.ended.length > 0) this.requestRound('full');
  }

  private degrade(e: JobEntry, stage: DegradedStage, reason: string): void {
    degradeJob(e, stage, reason, {
      wallMs: this.clock.wallMs(),
      metrics: this.metrics,
      log: this.o.log,
      changed: (x) => this.jobChanged(x),
    });
  }

  private jobChanged(e: JobEntry): void {
    this.events.emit({ type: 'job', id: jobIdOf(e.rec.spec), phase: e.rec.phase, ts: this.clock.wallMs() });
    this.plans.publish(e, this.clock);
    void this.save();
  }

  /** Once per round, to backends that show progress (optional port method; never fails a round). */
  private reportJobs(): void {
    if (!this.o.backend.reportJobs) return;
    try {
      this.o.backend.reportJobs(
        [...this.entries.values()].map((e) =>
          jobReport(e, { clock: this.clock, restartPriorSec: this.restartPriorOf(e) }),
        ),
      );
    } catch (err) {
      this.o.log.warn({ err }, 'reporting jobs to the backend failed');
    }
  }

  private async publishStatus(state: 'online' | 'offline'): Promise<void> {
    const msg = { v: 1, state, ts: Date.now(), id: this.o.id };
    await this.o.publisher.publish(CONTROLLER_STATUS_TOPIC, JSON.stringify(msg), { retain: true });
  }

  /** Saves the document; saves asked for while one is pending are written once. */
  private save(): Promise<void> {
    return this.saves.request();
  }

  private async saveNow(): Promise<void> {
    if (!this.clockValue) return;
    const jobs = this.records();
    const doc: RuntimeDocument = { v: 1, originMs: this.clock.originMs, decisions: this.decisions, jobs };
    // What this save makes durable: each job's target as of now (a later write waits for the next).
    const generations = jobs.map((r) => [jobIdOf(r.spec), r.target?.generation ?? 0] as const);
    try {
      await this.o.store.saveDocument(doc);
      for (const [id, g] of generations) if (this.entries.has(id)) this.saved.set(id, g);
    } catch (err) {
      this.o.log.error({ err }, 'saving state failed');
    }
  }
}
