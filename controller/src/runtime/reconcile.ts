/**
 * Round phase 2: the observation is the truth about what runs. Each job's view of what it holds,
 * its shape history and its end are brought in line with it — nothing the runtime remembers about
 * what runs survives a round in which the backend says otherwise. Pure (time comes in).
 */
import { convergenceOfEpochs } from '../models/convergence/observed-rule';
import type { JobEnd, ObservedJob } from './backend';
import type { JobEntry } from './job-entry';
import { startSpan } from './job-record';
import { currentOf, holdsAnything } from './observation';

export interface ReconcileTime {
  /** Job seconds (runtime clock). */
  readonly now: number;
  readonly wallMs: number;
}

export const isTerminal = (e: JobEntry): boolean => e.rec.phase === 'done' || e.rec.phase === 'failed';

/**
 * Reads one job's observation. `inFlight`: a rollout of the job runs, so its shape history waits for
 * the rollout's confirmation rather than following the half-changed set.
 * @returns the end the job reached in this round, if any.
 */
export function reconcileJob(
  e: JobEntry,
  observed: ObservedJob | undefined,
  t: ReconcileTime & { readonly inFlight: boolean },
): JobEnd | null {
  e.observed = observed;
  // Most jobs of a long run are over and gone: nothing to read.
  if (isTerminal(e) && (observed === undefined || observed.tasks.length === 0)) {
    e.current = null;
    e.wound = observed === undefined || observed.finished !== null;
    return null;
  }
  e.current = currentOf(observed);
  if (isTerminal(e)) {
    e.wound = observed === undefined || (observed.finished !== null && !holdsAnything(observed));
    return null;
  }
  const end = observed?.finished ?? observed?.exited ?? convergedEnd(e, true);
  if (end) {
    endJob(e, end, t);
    return end;
  }
  if (!t.inFlight) followShape(e, t.wallMs);
  return null;
}

/** Marks a job over: its phase, when, why; its open span closes. */
export function endJob(e: JobEntry, end: JobEnd, t: ReconcileTime): void {
  const { rec } = e;
  rec.phase = end.outcome === 'succeeded' ? 'done' : 'failed';
  rec.end = end;
  rec.finishedAt = t.now;
  rec.reason = null;
  rec.degraded = null;
  startSpan(rec, null, t.wallMs, false);
}

/** The open span follows what runs: a different observed shape opens a new one, nothing closes it. */
function followShape(e: JobEntry, wallMs: number): void {
  const open = e.rec.spans.at(-1);
  const live = open && open.until === null ? open : null;
  const cur = e.current?.shape ?? null;
  if (cur === null) {
    if (live) startSpan(e.rec, null, wallMs, false);
    return;
  }
  if (!live || live.shape.ps !== cur.ps || live.shape.workers !== cur.workers)
    startSpan(e.rec, cur, wallMs, false);
}

/**
 * True once per epoch the job completes (its furthest step crossed into a new epoch): when the
 * convergence rule is worth checking between rounds.
 */
export function epochCompleted(e: JobEntry): boolean {
  const epoch = Math.floor(e.obs.stepsDone() / e.rec.spec.stepsPerEpoch);
  if (epoch <= e.epochChecked) return false;
  e.epochChecked = epoch;
  return true;
}

/**
 * The paper's definition of done: the convergence rule holds on the loss the job logged. In a
 * round (`once`) it is checked only when new observations arrived since the last check.
 */
export function convergedEnd(e: JobEntry, once: boolean): JobEnd | null {
  if (isTerminal(e) || e.rec.spec.convergence.stopsJob === false) return null;
  if (once) {
    // The rule reads completed epochs only: nothing to check before another one completes.
    const epochs = Math.floor(e.obs.stepsDone() / e.rec.spec.stepsPerEpoch);
    if (e.ruleCheckedAt === epochs) return null;
    e.ruleCheckedAt = epochs;
  }
  const { spec } = e.rec;
  const rule = {
    stepsPerEpoch: spec.stepsPerEpoch,
    threshold: spec.convergence.threshold,
    patience: spec.convergence.patience,
  };
  const r = convergenceOfEpochs(e.obs.epochLosses(), rule, e.obs.stepsDone());
  if (r.epoch === null) return null;
  return {
    outcome: 'succeeded',
    reason: 'Converged',
    message: `the loss fell by less than ${rule.threshold} per epoch for ${rule.patience} epochs (epoch ${r.epoch})`,
  };
}
