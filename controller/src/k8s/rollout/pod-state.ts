/** What a pod's status means for a rollout. Pure. */
import type { V1Pod } from '@kubernetes/client-node';

export type PodState =
  'pending' | 'running' | 'succeeded' | 'failed' | 'unschedulable' | 'image-error' | 'terminating';

export interface PodVerdict {
  readonly state: PodState;
  readonly reason?: string;
  readonly message?: string;
}

/** Container waiting reasons that will not resolve by waiting. */
const FATAL_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'CrashLoopBackOff',
]);

export function podState(pod: V1Pod): PodVerdict {
  if (pod.metadata?.deletionTimestamp) return { state: 'terminating' };
  const status = pod.status;
  if (status?.phase === 'Succeeded') return { state: 'succeeded' };
  if (status?.phase === 'Failed')
    return {
      state: 'failed',
      reason: status.reason ?? 'Failed',
      message: status.message ?? 'the pod failed',
    };
  const waiting = [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])]
    .map((c) => c.state?.waiting)
    .find((w) => w?.reason !== undefined && FATAL_WAITING.has(w.reason));
  if (waiting)
    return { state: 'image-error', reason: waiting.reason ?? 'ImageError', message: waiting.message ?? '' };
  const scheduled = status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable')
    return { state: 'unschedulable', reason: 'Unschedulable', message: scheduled.message ?? '' };
  if (status?.phase === 'Running') return { state: 'running' };
  return { state: 'pending' };
}
