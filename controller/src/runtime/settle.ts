/**
 * Confirm or forget: what a job's intent records once its rollout settles. Only applied actions
 * change it; a failed one changes nothing but the job's degraded reason — the next round observes
 * what the backend was left with and plans again. Pure (time comes in).
 */
import type { PlanAction } from '../planning/types';
import type { JobEntry } from './job-entry';
import { startSpan } from './job-record';
import type { ReconcileTime } from './reconcile';
import { isTerminal } from './reconcile';

/** Records one applied action in the job's intent. */
export function confirmAction(e: JobEntry, a: PlanAction, t: ReconcileTime, fitted: boolean): void {
  const { rec } = e;
  if (isTerminal(e)) return;
  switch (a.kind) {
    case 'start':
    case 'resize': {
      // A resize always restarts; a start does when it resumes a job that ran before (checkpoint).
      if (a.kind === 'resize' || rec.spans.length > 0) rec.restarts += 1;
      e.current = { shape: { ...a.shape }, placement: a.placement.map((p) => ({ ...p })) };
      startSpan(rec, a.shape, t.wallMs, rec.phase !== 'pre-run' && rec.phase !== 'pending' && fitted);
      if (rec.phase !== 'pre-run' && rec.phase !== 'pending') [rec.phase, rec.reason] = ['running', null];
      return;
    }
    case 'suspend':
      e.current = null;
      startSpan(rec, null, t.wallMs, false);
      [rec.phase, rec.reason] = ['waiting', a.reason];
      return;
    case 'replace-worker': {
      const cur = e.current;
      if (!cur) return;
      e.current = {
        shape: cur.shape,
        placement: cur.placement.map((p) =>
          p.role === 'worker' && p.index === a.index ? { ...p, server: a.server } : p,
        ),
      };
      // A new span at the same shape: the replacement is judged on its own records.
      startSpan(rec, cur.shape, t.wallMs, rec.spans.at(-1)?.fitted ?? false);
      return;
    }
    case 'finish':
      return;
  }
}

/** A short description of an action, for logs and events. */
export function describeAction(a: PlanAction): string {
  switch (a.kind) {
    case 'start':
    case 'resize':
      return `${a.kind} ${a.jobId} ${a.shape.ps}x${a.shape.workers}`;
    case 'finish':
      return `finish ${a.jobId} (${a.reason})`;
    default:
      return `${a.kind} ${a.jobId}`;
  }
}
