/**
 * The one owner of every rollout (ADR 0035). The round writes each job's target here; after the
 * round, every job in flight gets its next step — chosen by `nextStep`, carried out by the
 * backend's executor, one at a time per job and not awaited by the round — and a round is asked
 * for at the step's requeue hint. Nothing here is the truth about a rollout: the target is in the
 * job's record, what runs is observed; a controller that restarts simply steps on.
 *
 * What happens when a rollout fails or does not reach its target in time is decided here and only
 * here (`giveUp`): the job is marked degraded, waits out a doubling backoff, and holds what is safe
 * to keep of what runs until the next full round re-plans it. No executor rolls back.
 */
import type { Logger } from 'pino';
import type { MetricsRecord } from '../../../../shared/src/schemas';
import type { PlanAction } from '../../planning/types';
import type { Executor, Observation, ObservedJob } from '../backend';
import type { Clock, TimerHandle, Timers } from '../clock';
import type { EventHub } from '../events';
import type { JobEntry } from '../job-entry';
import { healJob } from '../job-health';
import type { DegradedStage } from '../job-record';
import { startSpan } from '../job-record';
import { jobIdOf } from '../job-spec';
import type { RuntimeMetrics } from '../metrics';
import { RetryBackoff } from '../retry-backoff';
import type { RoundKind } from '../round';
import { isInFlight } from './in-flight';
import { nextStep, type NextStep, type RolloutStep } from './next-step';
import { newRollout, noteRecord, withSample, type RolloutTimes } from './restart-cost';
import { roomFor } from './room';
import { RolloutStats } from './rollout-stats';
import { currentTasks, holdingTarget, shapeOf, targetOf, type JobTarget } from './target';

export interface RolloutsOptions {
  readonly executor: Executor;
  readonly clock: () => Clock;
  /** The runtime's timers: a target's deadline brings a round when it passes. */
  readonly timers: Timers;
  /** Jobs in flight at most; a decision beyond it is not written (decided again when one lands). */
  readonly maxInFlight: number;
  /** Wall ms a target may take; then the rollout is given up. The only rollout timeout. */
  readonly timeoutMs: number;
  /** Wall ms between looks at a rollout that waits (0: only when the backend says something changed). */
  readonly pollMs: number;
  readonly metrics: RuntimeMetrics;
  readonly log: Logger;
  readonly events: EventHub;
  readonly roundNo: () => number;
  /** True once the job's record as it is now is durable (the store saved it). */
  readonly durable: (e: JobEntry) => boolean;
  readonly degrade: (e: JobEntry, stage: DegradedStage, reason: string) => void;
  readonly jobChanged: (e: JobEntry) => void;
  readonly requestRound: (kind: RoundKind, delayMs: number) => void;
  /** True once the controller stops: no new steps, late outcomes change nothing. */
  readonly stopped: () => boolean;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** An executor step under way, for the target it was taken for. */
interface Stepping {
  readonly e: JobEntry;
  readonly generation: number;
  readonly run: Promise<void>;
  /** Resolves when the job's target is replaced meanwhile: nobody needs to wait for this step then. */
  readonly superseded: Promise<void>;
  readonly supersede: () => void;
}

export class Rollouts {
  private readonly retries = new RetryBackoff();
  private readonly stepping = new Map<string, Stepping>();
  /** Some decision was not written for the bound: a full round is asked for when a rollout lands. */
  private deferred = false;
  /**
   * Targets (`job@generation`) whose deadline timer fired. The deadline itself is durable (the
   * target's `deadlineMs`, on the runtime's clock); the timer only brings the round that looks.
   */
  private readonly late = new Set<string>();
  private readonly deadlines = new Map<string, TimerHandle>();
  readonly stats = new RolloutStats();

  constructor(private readonly o: RolloutsOptions) {}

  /** False while the job waits out a failure backoff (a full round is asked for when it ends). */
  mayWrite(id: string): boolean {
    const wait = this.retries.waitMs(id, this.o.clock().wallMs());
    if (wait > 0) this.o.requestRound('full', wait);
    return wait <= 0;
  }

  /**
   * True while the job's rollout waits on its cluster (in flight, not waiting out a backoff): what
   * `Controller.settled()` waits for.
   */
  waiting(e: JobEntry): boolean {
    return isInFlight(e) && this.retries.waitMs(jobIdOf(e.rec.spec), this.o.clock().wallMs()) <= 0;
  }

  /** True while an executor step for the job's current target has not returned. */
  stepBusy(id: string): boolean {
    const s = this.stepping.get(id);
    return s !== undefined && isLive(s);
  }

  /** True while any executor step for a current target has not returned. */
  busy(): boolean {
    return [...this.stepping.values()].some(isLive);
  }

  /**
   * Writes the target a job's actions ask for (the round's phase 8). False when nothing was written:
   * the job waits out a backoff, or `inFlight` jobs already are in flight (a finish always goes).
   */
  write(e: JobEntry, actions: readonly PlanAction[], o: { fitted: boolean; inFlight: number }): boolean {
    if (actions.length === 0) return false;
    const id = jobIdOf(e.rec.spec);
    const finish = actions.some((a) => a.kind === 'finish');
    if (!finish && !this.mayWrite(id)) return false;
    if (!finish && !isInFlight(e) && o.inFlight >= this.o.maxInFlight) {
      this.deferred = true;
      return false;
    }
    const clock = this.o.clock();
    const now = clock.wallMs();
    const previous = e.rec.target;
    const target = targetOf(actions, {
      generation: (previous?.generation ?? 0) + 1,
      current: currentTasks(e.observed, previous),
      hasRun: e.rec.spans.length > 0,
      fitted: o.fitted,
      time: { wallMs: now, timeoutMs: this.o.timeoutMs },
    });
    this.begin(e, target, now);
    for (const a of actions) this.o.metrics.planActions.inc({ kind: a.kind, result: 'written' });
    this.o.events.emit({ type: 'decision', round: this.o.roundNo(), actions, ts: now });
    this.o.jobChanged(e);
    return true;
  }

  /** Round phase 2 for one job: how far its rollout got in this observation (reached, gone, late). */
  observe(e: JobEntry, observed: ObservedJob | undefined, nowMs: number): void {
    const t = e.rec.target;
    if (!t || t.reachedAtMs !== undefined) return;
    const next = nextStep(t, observed);
    const times = this.timesOf(e, t);
    if (times && times.goneAtMs === null && isPastTheOldSet(next)) times.goneAtMs = nowMs;
    if (next.kind === 'reached') this.reached(e, t, nowMs);
    else if (nowMs >= t.deadlineMs || this.late.has(lateKey(e, t)))
      this.giveUp(
        e,
        observed,
        `timed out: did not reach its target within ${Math.round((t.deadlineMs - t.sinceMs) / 1000)} s (${waitingFor(next)})`,
      );
  }

  /** After the round (its writes durable): the next step of every job in flight, not awaited. */
  step(entries: Iterable<JobEntry>, observation: Observation): void {
    if (this.o.stopped()) return;
    let room: ReturnType<typeof roomFor> | null = null;
    const all = [...entries];
    for (const e of all) {
      if (!isInFlight(e)) continue;
      const id = jobIdOf(e.rec.spec);
      if (this.stepping.has(id) || !this.o.durable(e)) continue;
      // A job whose steps failed waits out its backoff (a round comes when it ends).
      const wait = this.retries.waitMs(id, this.o.clock().wallMs());
      if (wait > 0) {
        this.o.requestRound('pre-run', wait);
        continue;
      }
      const t = e.rec.target!;
      const observed = observation.jobs.get(id);
      room ??= roomFor(observation, all);
      const next = nextStep(t, observed, room(e));
      if (next.kind === 'failed') this.giveUp(e, observed, next.reason);
      else if (next.kind === 'wait' || next.kind === 'reached') {
        if (this.o.pollMs > 0) this.o.requestRound('pre-run', this.o.pollMs);
      } else this.launch(e, t, next, observed);
    }
  }

  /** A record of the job arrived: its rollout's checkpoint or first step (the restart cost). */
  onRecord(e: JobEntry, r: MetricsRecord): void {
    const c = e.rec.restartCost;
    if (!c?.last) return;
    const sec = noteRecord(c.last, r, this.o.clock().scale);
    if (sec === null) return;
    e.rec.restartCost = withSample(c, c.last, sec);
    this.stats.restart(sec);
  }

  /** The job is gone: its step finishes (its outcome is dropped), its backoff goes. */
  async forget(id: string): Promise<void> {
    this.retries.forget(id);
    this.clearDeadline(id);
    await this.stepping.get(id)?.run;
  }

  /**
   * Resolves once no step for a current target is under way. A step whose target was replaced
   * meanwhile (given up: it hangs on a call that never answers) is not waited for; the job's next
   * step still waits for it, so one job's steps never interleave.
   */
  async idle(): Promise<void> {
    for (;;) {
      const live = [...this.stepping.values()].filter(isLive);
      if (live.length === 0) return;
      await Promise.all(live.map((s) => Promise.race([s.run, s.superseded])));
    }
  }

  /** Resolves once every step under way returned, or after `ms` (shutdown). */
  async drain(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, ms)));
    await Promise.race([Promise.all([...this.stepping.values()].map((s) => s.run)), late]);
    clearTimeout(timer);
  }

  private begin(e: JobEntry, target: JobTarget, now: number): void {
    e.rec.target = target;
    const under = this.stepping.get(jobIdOf(e.rec.spec));
    if (under && under.generation !== target.generation) under.supersede();
    e.rec.restartCost = {
      samples: e.rec.restartCost?.samples ?? [],
      last: newRollout(target.generation, target.restart, now),
    };
    // The deadline is looked at in a round: one comes then at the latest.
    const id = jobIdOf(e.rec.spec);
    this.clearDeadline(id);
    const key = lateKey(e, target);
    const timer = this.o.timers.setTimeout(
      () => {
        this.deadlines.delete(id);
        if (e.rec.target?.generation !== target.generation || e.rec.target.reachedAtMs !== undefined) return;
        this.late.add(key);
        this.o.requestRound('pre-run', 0);
      },
      Math.max(0, target.deadlineMs - now),
    );
    this.deadlines.set(id, timer);
  }

  private clearDeadline(id: string): void {
    const timer = this.deadlines.get(id);
    if (timer) this.o.timers.clearTimeout(timer);
    this.deadlines.delete(id);
  }

  private timesOf(e: JobEntry, t: JobTarget): RolloutTimes | null {
    const last = e.rec.restartCost?.last;
    return last && last.generation === t.generation ? last : null;
  }

  private launch(e: JobEntry, t: JobTarget, step: RolloutStep, observed: ObservedJob | undefined): void {
    const id = jobIdOf(e.rec.spec);
    const now = this.o.clock().wallMs();
    const times = this.timesOf(e, t);
    if (
      step.kind === 'stop' &&
      times &&
      times.sigtermAtMs === null &&
      step.tasks.some((x) => x.state === 'running')
    )
      times.sigtermAtMs = now;
    const failed = (error: string): void => {
      // A step of a target that has since been replaced changes nothing.
      if (this.o.stopped() || e.rec.target?.generation !== t.generation) return;
      this.giveUp(e, e.observed, `${step.kind}: ${error}`);
    };
    let supersede = (): void => {};
    const superseded = new Promise<void>((r) => (supersede = r));
    const run = this.o.executor
      .step({ jobId: id, spec: e.rec.spec, target: t, observed, step })
      .then(
        (r) => {
          if (r.kind === 'failed') failed(r.error);
          else if (!this.o.stopped() && e.rec.target?.generation === t.generation)
            this.o.requestRound('pre-run', r.requeueAfterMs ?? 0);
        },
        (err: unknown) => failed(messageOf(err)),
      )
      .finally(() => {
        if (this.stepping.get(id)?.run === run) this.stepping.delete(id);
        // The job may step on now (its target was replaced while this one hung, say).
        if (!this.o.stopped() && e.rec.target?.generation !== t.generation) this.o.requestRound('pre-run', 0);
      });
    this.stepping.set(id, { e, generation: t.generation, run, superseded, supersede });
  }

  private reached(e: JobEntry, t: JobTarget, now: number): void {
    const { rec } = e;
    this.late.delete(lateKey(e, t));
    this.clearDeadline(jobIdOf(rec.spec));
    rec.target = { ...t, reachedAtMs: now };
    const times = this.timesOf(e, t);
    if (times) times.runningAtMs = now;
    if (t.restart) rec.restarts += 1;
    // Something new started: a new span (a replaced worker is judged on its own records too);
    // a target that holds nothing closes the open one.
    const started = t.tasks.some((x) => x.generation === t.generation);
    if (started || t.tasks.length === 0)
      startSpan(
        rec,
        started ? shapeOf(t) : null,
        now,
        t.fitted && rec.phase !== 'pre-run' && rec.phase !== 'pending',
      );
    this.stats.landed(t.sinceMs, now);
    this.o.metrics.planActions.inc({ kind: 'rollout', result: 'applied' });
    if (t.givenUp === undefined) {
      intend(e, t);
      this.retries.forget(jobIdOf(rec.spec));
      healJob(e, 'rollout');
    }
    this.o.jobChanged(e);
    if (this.deferred) {
      this.deferred = false;
      this.o.requestRound('full', 0);
    }
  }

  /** A rollout that failed or ran out of time: re-planning, in one place. */
  private giveUp(e: JobEntry, observed: ObservedJob | undefined, reason: string): void {
    const t = e.rec.target;
    if (!t) return;
    const id = jobIdOf(e.rec.spec);
    const now = this.o.clock().wallMs();
    this.late.delete(lateKey(e, t));
    this.o.metrics.planActions.inc({
      kind: 'rollout',
      result: reason.startsWith('timed out') ? 'timed-out' : 'failed',
    });
    this.stats.gaveUp(t.sinceMs, now);
    const delay = this.retries.failed(id, now);
    this.o.degrade(e, 'rollout', reason);
    this.o.log.warn({ job: id, generation: t.generation, reason }, 'rollout given up; the job is re-planned');
    this.begin(
      e,
      holdingTarget(t, observed, { reason, time: { wallMs: now, timeoutMs: this.o.timeoutMs } }),
      now,
    );
    this.o.jobChanged(e);
    this.o.requestRound('full', delay);
  }
}

/** The record's phase and reason follow a decision once it is reached (the API shows `resizing` meanwhile). */
function intend(e: JobEntry, t: JobTarget): void {
  const { rec } = e;
  if (t.end) return;
  if (t.tasks.length === 0) [rec.phase, rec.reason] = ['waiting', t.reason ?? null];
  else if (rec.phase !== 'pre-run' && rec.phase !== 'pending') [rec.phase, rec.reason] = ['running', null];
}

const lateKey = (e: JobEntry, t: JobTarget): string => `${jobIdOf(e.rec.spec)}@${t.generation}`;

/** The step was taken for the job's current target. */
const isLive = (s: Stepping): boolean => s.e.rec.target?.generation === s.generation;

/** Nothing of the set a rollout replaces is left. */
const isPastTheOldSet = (n: NextStep): boolean =>
  n.kind !== 'record-end' && n.kind !== 'stop' && !(n.kind === 'wait' && n.for === 'stopping');

function waitingFor(n: NextStep): string {
  switch (n.kind) {
    case 'wait':
      return n.for === 'room'
        ? 'waiting for room'
        : `waiting for tasks ${n.for === 'running' ? 'to run' : 'to stop'}`;
    case 'stop':
      return 'tasks left to stop';
    case 'start':
      return 'tasks left to start';
    case 'record-end':
      return 'the end not recorded';
    default:
      return n.kind;
  }
}
