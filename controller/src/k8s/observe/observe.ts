/**
 * What runs, read from the informer caches (OptimusJobs and pods) for the runtime's
 * `Backend.observe()`. Pure: the caches' items and the time come in. Each ps/worker pod owned by an
 * OptimusJob is one task; a pod that will not start by waiting (an image that cannot be pulled,
 * unschedulable past its grace, not running long after it was created) is observed as failed, so
 * the runtime re-plans the job instead of waiting on it for ever — also when no rollout waits on it
 * any more (the controller that started it died).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ObservedJob, ObservedTask, TaskState } from '../../runtime/backend';
import type { JobShape, TaskPlacement } from '../../scheduling/types';
import { isOurPod } from './cluster-view';
import { exitedOf, finishedOf } from './completion';
import { KIND, LABEL_GENERATION, LABEL_INDEX, LABEL_ROLE } from '../api/names';
import type { OptimusJob } from '../api/optimus-job';
import { jobIdOfResource } from '../api/optimus-job';
import { podState } from '../rollout/pod-state';

export interface ObserveTimings {
  /** How long a pod may stay unschedulable before it counts as failed. */
  readonly unschedulableGraceMs: number;
  /** How long after its creation a pod that is still not running counts as failed. */
  readonly startTimeoutMs: number;
}

const msOf = (t: string | Date | undefined): number => (t === undefined ? NaN : new Date(t).getTime());

/** The node a pod runs on, or the one it is pinned to while unbound. */
export function serverOf(pod: V1Pod): string {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const field = (terms ?? []).flatMap((t) => t.matchFields ?? []).find((f) => f.key === 'metadata.name');
  return field?.values?.[0] ?? '';
}

/** The state of one task's pod at `nowMs` (a disrupted pod is failed too: its task is gone). */
export function taskStateOf(pod: V1Pod, nowMs: number, t: ObserveTimings): TaskState {
  const v = podState(pod);
  switch (v.state) {
    case 'terminating':
      return 'stopping';
    case 'running':
    case 'succeeded':
    case 'failed':
      return v.state;
    case 'image-error':
      return 'failed';
    case 'unschedulable': {
      const since = msOf(
        pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.lastTransitionTime ??
          pod.metadata?.creationTimestamp,
      );
      return nowMs - since >= t.unschedulableGraceMs ? 'failed' : 'pending';
    }
    case 'pending':
      return nowMs - msOf(pod.metadata?.creationTimestamp) >= t.startTimeoutMs ? 'failed' : 'pending';
  }
}

function taskOf(pod: V1Pod, nowMs: number, t: ObserveTimings): ObservedTask | null {
  const labels = pod.metadata?.labels ?? {};
  const role = labels[LABEL_ROLE];
  const index = Number(labels[LABEL_INDEX]);
  if ((role !== 'ps' && role !== 'worker') || !Number.isInteger(index)) return null;
  // Pods an older controller started carry no generation: they match any target's (ADR 0035).
  const generation = Number(labels[LABEL_GENERATION]);
  return {
    role,
    index,
    server: serverOf(pod),
    state: taskStateOf(pod, nowMs, t),
    ...(labels[LABEL_GENERATION] !== undefined && Number.isInteger(generation) ? { generation } : {}),
  };
}

/** The uid of the OptimusJob that owns `pod`, if one does. */
const ownerUid = (pod: V1Pod): string | undefined =>
  isOurPod(pod) ? pod.metadata?.ownerReferences?.find((r) => r.kind === KIND)?.uid : undefined;

/**
 * Every OptimusJob (finished ones too: a restarted controller adopts their end) with the tasks of
 * the pods it owns — by uid, so the terminating pods of a deleted job never count for a new job
 * of the same name — what its pods say of its program, and what its status says of its end. The
 * pods are the truth about the program, not the status phase: a controller that died mid-rollout
 * leaves a status that says `Resizing` over a set that runs, and its exit must still be seen.
 */
export function observeJobs(
  jobs: readonly OptimusJob[],
  pods: readonly V1Pod[],
  o: ObserveTimings & {
    readonly nowMs: number;
    /**
     * True while this controller's executor rolls the job out: a set that fails while a rollout
     * starts or stops it is that rollout's failure (it deletes the set), not the program's end.
     */
    readonly rollingOut?: (jobId: string) => boolean;
  },
): Map<string, ObservedJob> {
  const byUid = new Map<string, V1Pod[]>();
  for (const pod of pods) {
    const uid = ownerUid(pod);
    if (uid === undefined) continue;
    const own = byUid.get(uid);
    if (own) own.push(pod);
    else byUid.set(uid, [pod]);
  }
  const out = new Map<string, ObservedJob>();
  for (const job of jobs) {
    const own = byUid.get(job.metadata.uid ?? '') ?? [];
    const id = jobIdOfResource(job);
    out.set(id, {
      tasks: own.flatMap((p) => taskOf(p, o.nowMs, o) ?? []),
      exited: o.rollingOut?.(id) ? null : exitedOf(own),
      finished: finishedOf(job),
    });
  }
  return out;
}

/**
 * The set of a job that runs now, from its pods (Running, not terminating), or null when it is not
 * a whole set (no PS or no worker runs). The executor rolls back to it and replaces workers in it:
 * the pods, not a status a controller may have left half-written when it died.
 */
export function runningSetOf(pods: readonly V1Pod[]): { shape: JobShape; placement: TaskPlacement[] } | null {
  const placement = pods
    .filter((p) => podState(p).state === 'running')
    .flatMap((p) => {
      const t = taskOf(p, 0, { unschedulableGraceMs: 0, startTimeoutMs: 0 });
      return t ? [{ role: t.role, index: t.index, server: t.server }] : [];
    })
    .sort((a, b) => (a.role === b.role ? a.index - b.index : a.role === 'ps' ? -1 : 1));
  const shape = {
    ps: placement.filter((p) => p.role === 'ps').length,
    workers: placement.filter((p) => p.role === 'worker').length,
  };
  return shape.ps > 0 && shape.workers > 0 ? { shape, placement } : null;
}
