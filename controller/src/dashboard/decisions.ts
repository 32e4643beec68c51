/**
 * Decisions in words: what a round's applied actions did to each job, and why. Pure; the sampler
 * passes the job records and the predicted remaining time at a shape (the what-if of the models
 * the round just fitted).
 */
import type { PlanAction } from '../planning/types';
import type { ObservedRecord } from '../runtime/job-entry';
import type { JobShape } from '../scheduling/types';
import { duration } from './format';
import type { DecisionEntry } from './history';
import { shapeText } from './job-rows';

export interface DecisionContext {
  readonly record: (jobId: string) => ObservedRecord | undefined;
  /** Predicted remaining job seconds at a shape, or null when not predicted. */
  readonly remaining: (jobId: string, shape: JobShape) => number | null;
}

/** The entries of one `decision` event, keyed by job id. */
export function decisionEntries(
  event: { readonly round: number; readonly actions: readonly unknown[]; readonly ts: number },
  ctx: DecisionContext,
): [string, DecisionEntry][] {
  const out: [string, DecisionEntry][] = [];
  for (const a of event.actions) {
    // A job's end is told by its own entry (finishEntry), with the reason the runtime recorded.
    if (!isAction(a) || a.kind === 'finish') continue;
    const rec = ctx.record(a.jobId);
    const entry = describeAction(a, rec, ctx);
    out.push([a.jobId, { t: event.ts, round: event.round, ...entry }]);
  }
  return out;
}

/** A job finished: the last entry of its history. */
export function finishEntry(
  rec: ObservedRecord | undefined,
  phase: 'done' | 'failed',
  ts: number,
): DecisionEntry {
  const jct = rec?.finishedAt != null ? rec.finishedAt - rec.submittedAt : null;
  return {
    t: ts,
    round: null,
    kind: phase,
    from: rec?.spans.at(-2)?.shape ?? null,
    to: null,
    preRun: false,
    why: `${endWhy(rec, phase)}${jct === null ? '' : ` (JCT ${duration(jct)})`}`,
  };
}

function endWhy(rec: ObservedRecord | undefined, phase: 'done' | 'failed'): string {
  const end = rec?.end ?? null;
  if (end === null) return phase === 'done' ? 'finished' : 'a task failed for good; the job stopped';
  if (end.reason === 'Converged') return `converged: ${end.message}`;
  if (end.reason === 'WorkersSucceeded') return 'the training program finished';
  return `${phase === 'done' ? 'finished' : 'failed'}: ${end.message || end.reason}`;
}

type Described = Omit<DecisionEntry, 't' | 'round'>;

function describeAction(a: PlanAction, rec: ObservedRecord | undefined, ctx: DecisionContext): Described {
  const preRun = rec?.phase === 'pre-run';
  const sample = preRunSample(rec);
  switch (a.kind) {
    case 'start':
      return {
        kind: 'start',
        from: null,
        to: a.shape,
        preRun,
        why: preRun
          ? `pre-run started: speed sample ${sample} at ${shapeText(a.shape)}`
          : `scheduled at ${shapeText(a.shape)}${predicted(ctx.remaining(a.jobId, a.shape))}`,
      };
    case 'resize':
      if (!preRun && sameShape(a.from, a.shape))
        return { kind: 'move', from: a.from, to: a.shape, preRun, why: moveWhy(a.shape, a.placement) };
      return {
        kind: 'resize',
        from: a.from,
        to: a.shape,
        preRun,
        why: preRun
          ? `pre-run: next speed sample ${sample} at ${shapeText(a.shape)}`
          : resizeWhy(a.from, a.shape, ctx.remaining(a.jobId, a.from), ctx.remaining(a.jobId, a.shape)),
      };
    case 'suspend':
      return {
        kind: 'suspend',
        from: rec?.spans.at(-2)?.shape ?? null,
        to: null,
        preRun: false,
        why: `suspended: ${a.reason}`,
      };
    case 'replace-worker':
      return {
        kind: 'replace-worker',
        from: rec?.current?.shape ?? null,
        to: rec?.current?.shape ?? null,
        preRun: false,
        why: `worker ${a.index} ran slower than its peers (a straggler) or went silent: replaced by a new one on ${a.server}`,
      };
    case 'finish':
      return {
        kind: a.outcome === 'succeeded' ? 'done' : 'failed',
        from: rec?.current?.shape ?? null,
        to: null,
        preRun: false,
        why: a.message,
      };
  }
}

function resizeWhy(from: JobShape, to: JobShape, before: number | null, after: number | null): string {
  const grows = to.ps + to.workers > from.ps + from.workers;
  const head = `resized ${shapeText(from)} → ${shapeText(to)}`;
  const gain =
    before !== null && after !== null ? `: predicted remaining ${duration(before)} → ${duration(after)}` : '';
  // Policy-neutral: the policy is behind one contract and says only what it decided.
  const why = grows ? 'the policy gave it more tasks' : 'the policy gave some of its tasks to other jobs';
  return `${head}${gain} (${why})`;
}

const sameShape = (a: JobShape, b: JobShape): boolean => a.ps === b.ps && a.workers === b.workers;

/** The shape stays, the tasks move: say where they run now (a resize's "before → after" would be a no-op). */
function moveWhy(shape: JobShape, placement: readonly { readonly server: string }[]): string {
  const per = new Map<string, number>();
  for (const p of placement) per.set(p.server, (per.get(p.server) ?? 0) + 1);
  const where = [...per].map(([server, n]) => `${server} (${n})`).join(', ');
  return `moved to other servers at the same shape, ${shapeText(shape)}: now on ${where} (checkpoint → restart)`;
}

const predicted = (sec: number | null): string =>
  sec === null ? '' : `; predicted remaining ${duration(sec)}`;

function preRunSample(rec: ObservedRecord | undefined): string {
  const pre = rec?.preRun;
  if (!pre) return '';
  return `${Math.min(pre.done + 1, pre.shapes.length)} of ${pre.shapes.length}`;
}

function isAction(a: unknown): a is PlanAction {
  if (typeof a !== 'object' || a === null) return false;
  const { kind, jobId } = a as { kind?: unknown; jobId?: unknown };
  return (
    typeof jobId === 'string' &&
    (kind === 'start' || kind === 'resize' || kind === 'suspend' || kind === 'replace-worker')
  );
}
