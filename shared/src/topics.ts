/**
 * MQTT topic layout shared by sidecars, the controller and monitoring subscribers.
 *
 * Every topic starts with {@link TOPIC_ROOT} so a broker ACL can confine sidecars to it.
 * Segments are validated so that a job or namespace name can never inject `/`, `+` or `#`.
 *
 * @example
 * metricsTopic({ namespace: 'ml', job: 'resnet', role: 'worker', index: 0 })
 * // => 'optimus/v1/ml/resnet/worker/0/metrics'
 */
import { z } from 'zod';

export const TOPIC_ROOT = 'optimus/v1' as const;

export const ROLES = ['ps', 'worker', 'scheduler'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** Kubernetes-style names (RFC 1123 labels) keep topics and object names interchangeable. */
export const nameSegmentSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 label');

export const taskIdSchema = z.object({
  namespace: nameSegmentSchema,
  job: nameSegmentSchema,
  role: roleSchema,
  index: z.number().int().min(0).max(1_000_000),
});
export type TaskId = z.infer<typeof taskIdSchema>;
export type JobId = Pick<TaskId, 'namespace' | 'job'>;

const taskPrefix = (t: TaskId): string => `${TOPIC_ROOT}/${t.namespace}/${t.job}/${t.role}/${t.index}`;

export const metricsTopic = (t: TaskId): string => `${taskPrefix(t)}/metrics`;
export const statusTopic = (t: TaskId): string => `${taskPrefix(t)}/status`;
/** The controller's retained watermark of what it has durably stored for the task (see `schemas.ts`). */
export const storedTopic = (t: TaskId): string => `${taskPrefix(t)}/stored`;
export const planTopic = (j: JobId): string => `${TOPIC_ROOT}/${j.namespace}/${j.job}/plan`;
export const CONTROLLER_STATUS_TOPIC = `${TOPIC_ROOT}/controller/status` as const;

/** Subscription filters the controller uses. `+` matches one segment. */
export const METRICS_FILTER = `${TOPIC_ROOT}/+/+/+/+/metrics` as const;
export const STATUS_FILTER = `${TOPIC_ROOT}/+/+/+/+/status` as const;
export const PLAN_FILTER = `${TOPIC_ROOT}/+/+/plan` as const;

/**
 * MQTT client ids. The controller subscribes under one fixed id whichever replica leads, so a new
 * leader resumes the persistent session (and the records queued in it) of the one that died. A
 * sidecar's id names its task with `.` separators, which RFC 1123 labels cannot contain, so two
 * tasks never share an id; with per-task broker identities the broker binds each id to its user.
 */
export const CONTROLLER_CLIENT_ID = 'optimus-controller' as const;
export const taskClientId = (t: TaskId): string => `optimus.${t.namespace}.${t.job}.${t.role}.${t.index}`;

export type ParsedTopic =
  | { kind: 'metrics'; task: TaskId }
  | { kind: 'status'; task: TaskId }
  | { kind: 'stored'; task: TaskId }
  | { kind: 'plan'; job: JobId }
  | { kind: 'controller-status' };

/** Parses a concrete topic; returns null for anything that is not one of ours (counted by callers). */
export function parseTopic(topic: string): ParsedTopic | null {
  if (topic === CONTROLLER_STATUS_TOPIC) return { kind: 'controller-status' };
  const parts = topic.split('/');
  if (parts[0] !== 'optimus' || parts[1] !== 'v1') return null;
  if (parts.length === 5 && parts[4] === 'plan') {
    const job = { namespace: parts[2], job: parts[3] };
    const ok =
      nameSegmentSchema.safeParse(job.namespace).success && nameSegmentSchema.safeParse(job.job).success;
    return ok ? { kind: 'plan', job: job as JobId } : null;
  }
  if (parts.length !== 7) return null;
  const kind = parts[6];
  if (kind !== 'metrics' && kind !== 'status' && kind !== 'stored') return null;
  const index = parts[5] !== undefined && /^\d+$/.test(parts[5]) ? Number(parts[5]) : NaN;
  const task = taskIdSchema.safeParse({ namespace: parts[2], job: parts[3], role: parts[4], index });
  return task.success ? { kind, task: task.data } : null;
}

/** A stable string key for a task, used for de-duplication maps. */
export const taskKey = (t: TaskId): string => `${t.namespace}/${t.job}/${t.role}/${t.index}`;
export const jobKey = (j: JobId): string => `${j.namespace}/${j.job}`;
