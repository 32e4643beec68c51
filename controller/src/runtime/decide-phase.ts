/**
 * Round phases decide and plan: the policy on the jobs past their pre-run, then
 * plan = diff(observed, decided). Isolated per job: a job whose snapshot cannot be built, or whose
 * presence makes the policy or the planner throw, is set aside with the reason, and every other
 * job is still decided.
 */
import type { Plan, PlanAction } from '../planning/types';
import type { Decision, JobDecision, JobSnapshot, Policy, PolicyInput, RunSpan } from '../scheduling/types';
import type { Core, CurrentJob } from './core';
import type { JobEntry } from './job-entry';
import { jobIdOf } from './job-spec';

export interface DecidedJob {
  readonly entry: JobEntry;
  readonly decision: JobDecision;
  readonly actions: readonly PlanAction[];
  /** What the job holds once its actions apply (null when they stop it). */
  readonly target: CurrentJob | null;
}

export interface DecideOutcome {
  readonly decided: DecidedJob[];
  /** Jobs set aside this round, with the reason. */
  readonly failed: { readonly entry: JobEntry; readonly error: string }[];
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Wall-clock ms (a span's `since`/`until`) → seconds on the policy's clock. */
export type JobSeconds = (wallMs: number) => number;

/** The policy's view of one job; throws when its models cannot be used. */
export function jobSnapshot(e: JobEntry, lost: readonly number[] = [], jobSeconds?: JobSeconds): JobSnapshot {
  const { spec, submittedAt } = e.rec;
  const m = e.models;
  if (!m) throw new Error('no models yet');
  const { steps, lower, upper } = m.remaining;
  if (![steps, lower, upper].every((v) => Number.isFinite(v) && v >= 0))
    throw new Error(`remaining work is not a finite number of steps (${steps})`);
  const probe = m.speed.predict(1, 1).stepsPerSec;
  if (!Number.isFinite(probe)) throw new Error(`the speed model predicts ${probe} steps/s`);
  return {
    id: jobIdOf(spec),
    mode: spec.mode,
    psDemand: spec.psDemand,
    workerDemand: spec.workerDemand,
    minPs: spec.minPs,
    maxPs: spec.maxPs,
    minWorkers: spec.minWorkers,
    maxWorkers: spec.maxWorkers,
    arrivalTime: submittedAt,
    current: e.current,
    remaining: m.remaining,
    speed: m.speed,
    workerStepTimes: e.obs.workerStepTimes(e.rec.spans.length - 1),
    ...(lost.length > 0 ? { lostWorkers: lost } : {}),
    ...(spec.nodeConstraints ? { constraints: spec.nodeConstraints } : {}),
    ...(jobSeconds && e.rec.spans.length > 0 ? { runs: runsOf(e, jobSeconds) } : {}),
  };
}

/** The job's shape history on the policy's clock (what attained service is derived from). */
function runsOf(e: JobEntry, jobSeconds: JobSeconds): RunSpan[] {
  return e.rec.spans.map((s) => ({
    shape: s.shape,
    from: jobSeconds(s.since),
    to: s.until === null ? null : jobSeconds(s.until),
  }));
}

/**
 * Runs the policy; when it throws, finds the jobs that make it throw (each alone) and decides
 * without them. Only a failing round pays for the search.
 */
export function decideIsolated(
  policy: Policy,
  input: PolicyInput,
): { decision: Decision; culprits: Map<string, string> } {
  const culprits = new Map<string, string>();
  try {
    return { decision: policy.decide(input), culprits };
  } catch (first) {
    for (const job of input.jobs) {
      try {
        policy.decide({ ...input, jobs: [job] });
      } catch (err) {
        culprits.set(job.id, messageOf(err));
      }
    }
    const rest = input.jobs.filter((j) => !culprits.has(j.id));
    if (rest.length === input.jobs.length) throw first;
    return { decision: policy.decide({ ...input, jobs: rest }), culprits };
  }
}

/** Plans each job's decision on its own, so one job's bad decision cannot spoil the plan of others. */
function planEach(core: Core, e: JobEntry, d: JobDecision): Plan {
  return core.plan(new Map([[d.jobId, e.current]]), { jobs: [d] });
}

/** Decides and plans `entries` against `servers` (whose `reserved` already holds what others hold). */
export function decideAndPlan(
  core: Core,
  entries: readonly JobEntry[],
  base: Omit<PolicyInput, 'jobs'>,
  lostOf: (e: JobEntry) => readonly number[] = () => [],
  jobSeconds?: JobSeconds,
): DecideOutcome {
  const failed: DecideOutcome['failed'] = [];
  const byId = new Map<string, JobEntry>();
  const jobs: JobSnapshot[] = [];
  for (const e of entries) {
    try {
      jobs.push(jobSnapshot(e, lostOf(e), jobSeconds));
      byId.set(jobIdOf(e.rec.spec), e);
    } catch (err) {
      failed.push({ entry: e, error: messageOf(err) });
    }
  }
  if (jobs.length === 0) return { decided: [], failed };
  const { decision, culprits } = decideIsolated(core.policy, { ...base, jobs });
  for (const [id, error] of culprits) {
    const e = byId.get(id);
    if (e) failed.push({ entry: e, error: `the policy failed on this job: ${error}` });
  }
  const decided: DecidedJob[] = [];
  for (const d of decision.jobs) {
    const e = byId.get(d.jobId);
    if (!e) continue;
    try {
      const actions = planEach(core, e, d).actions;
      const target = d.action === 'run' ? { shape: d.shape, placement: d.placement } : null;
      decided.push({ entry: e, decision: d, actions, target });
    } catch (err) {
      failed.push({ entry: e, error: `planning failed: ${messageOf(err)}` });
    }
  }
  return { decided, failed };
}
