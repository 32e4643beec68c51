/**
 * The next step of a job toward its target, from what is observed — one pure function for every
 * backend (ADR 0035), so what a rollout does, and in which order, is decided in one place:
 *
 *   1. record the end (a finish), before anything stops, so a crash never starts the job again
 *      (a job the backend no longer knows has nothing to record);
 *   2. stop what does not belong to the target (a task of another generation, server or index,
 *      leftovers of a set half started), with the checkpoint grace when the target says so;
 *   3. wait until it is gone (it holds its resources until then; names are reused);
 *   4. a task of the target failed: the target cannot be reached (the runtime re-plans);
 *   5. wait for room: the missing tasks must fit beside what everything else holds;
 *   6. start what is missing, at the target's generation;
 *   7. wait until every task runs — then the target is reached.
 * One set at a time: nothing new starts while anything that must go is still there (ps-lite's
 * membership is static, and a pod's name is reused by the next generation).
 */
import type { ObservedJob, ObservedTask } from '../observed';
import type { JobEnd } from '../job-end';
import type { JobTarget, TargetTask } from './target';

/** What an executor carries out. */
export type RolloutStep =
  | { readonly kind: 'record-end'; readonly end: JobEnd }
  | { readonly kind: 'stop'; readonly tasks: readonly ObservedTask[]; readonly checkpoint: boolean }
  | { readonly kind: 'start'; readonly tasks: readonly TargetTask[] };

export type NextStep =
  | RolloutStep
  | { readonly kind: 'wait'; readonly for: 'stopping' | 'room' | 'running' }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'reached' };

/** True when `o` is the target's task `t` (an observed task without a generation matches any). */
export const isTask = (o: ObservedTask, t: TargetTask): boolean =>
  o.role === t.role &&
  o.index === t.index &&
  o.server === t.server &&
  (o.generation === undefined || o.generation === t.generation);

/**
 * @param room whether the given tasks fit now beside what every other job and the rest of this one
 *   holds (absent: always)
 */
export function nextStep(
  target: JobTarget,
  observed: ObservedJob | undefined,
  room: (tasks: readonly TargetTask[]) => boolean = () => true,
): NextStep {
  // A job the backend no longer knows (absent) runs nothing and has nothing to record.
  if (target.end && observed && !observed.finished) return { kind: 'record-end', end: target.end };
  const tasks = observed?.tasks ?? [];
  const own: ObservedTask[] = [];
  const foreign: ObservedTask[] = [];
  for (const o of tasks) (target.tasks.some((t) => isTask(o, t)) ? own : foreign).push(o);
  const toStop = foreign.filter((o) => o.state !== 'stopping');
  if (toStop.length > 0) return { kind: 'stop', tasks: toStop, checkpoint: target.checkpoint };
  if (tasks.some((o) => o.state === 'stopping')) return { kind: 'wait', for: 'stopping' };
  const failed = own.find((o) => o.state === 'failed');
  if (failed) return { kind: 'failed', reason: `${failed.role} ${failed.index} failed on ${failed.server}` };
  const missing = target.tasks.filter((t) => !own.some((o) => isTask(o, t)));
  if (missing.length > 0)
    return room(missing) ? { kind: 'start', tasks: missing } : { kind: 'wait', for: 'room' };
  if (own.some((o) => o.state === 'pending')) return { kind: 'wait', for: 'running' };
  return { kind: 'reached' };
}
