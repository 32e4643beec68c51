/**
 * Who may say what on the broker (ADR 0013), as data: one identity per task (MQTT allows one session
 * per client id, and the broker binds each client id to its user), one role per job granting only that
 * job's topics, one password per job derived from a key only the controller holds.
 *
 * Pure: no I/O. `dynsec-identities.ts` turns these into Mosquitto dynamic-security commands.
 */
import { createHmac } from 'node:crypto';
import {
  CONTROLLER_STATUS_TOPIC,
  TOPIC_ROOT,
  taskClientId,
  type JobId,
  type Role,
  type TaskId,
} from '../../../shared/src/topics';

/** What identities a job needs: its tasks, up to the shape bounds of its spec. */
export interface JobIdentity extends JobId {
  readonly maxPs: number;
  readonly maxWorkers: number;
  /**
   * What tells this creation of the job from an earlier one under the same name (Kubernetes: the
   * OptimusJob's uid): a job deleted and created again gets new credentials, so a credential that
   * leaked from the old one opens nothing. Absent where no such id exists.
   */
  readonly salt?: string | undefined;
}

export type AclType =
  | 'publishClientSend'
  | 'publishClientReceive'
  | 'subscribePattern'
  | 'subscribeLiteral'
  | 'unsubscribePattern';

export interface Acl {
  readonly acltype: AclType;
  readonly topic: string;
  readonly allow: boolean;
}

/** Every task a job can run (the MXNet scheduler task is index 0 of role `scheduler`). */
export function jobTasks(j: JobIdentity): TaskId[] {
  const of = (role: Role, n: number): TaskId[] =>
    Array.from({ length: n }, (_, index) => ({ namespace: j.namespace, job: j.job, role, index }));
  return [...of('ps', j.maxPs), ...of('worker', j.maxWorkers), ...of('scheduler', 1)];
}

/** A task's broker user name, equal to its client id (the broker binds one to the other). */
export const taskUsername = (t: TaskId): string => taskClientId(t);

/** The role of one job's tasks. `.` cannot occur in a namespace or job name, so names never collide. */
export const jobRoleName = (j: JobId): string => `optimus-job.${j.namespace}.${j.job}`;

export const CONTROLLER_ROLE = 'optimus-controller' as const;

/**
 * A job's tasks publish their own job's metrics and status (also the Last Will), and read only their
 * own job's watermarks and the controller's status. Nothing else: no plans, no other job, no `#`.
 */
export function jobAcls(j: JobId): Acl[] {
  const job = `${TOPIC_ROOT}/${j.namespace}/${j.job}`;
  const read = [`${job}/+/+/stored`, CONTROLLER_STATUS_TOPIC];
  return [
    { acltype: 'publishClientSend', topic: `${job}/+/+/metrics`, allow: true },
    { acltype: 'publishClientSend', topic: `${job}/+/+/status`, allow: true },
    ...read.flatMap((topic): Acl[] => [
      { acltype: 'subscribePattern', topic, allow: true },
      { acltype: 'publishClientReceive', topic, allow: true },
    ]),
  ];
}

/** The controller reads every Optimus topic and writes plans, watermarks and its own status. */
export function controllerAcls(): Acl[] {
  return [
    { acltype: 'subscribePattern', topic: `${TOPIC_ROOT}/#`, allow: true },
    { acltype: 'publishClientReceive', topic: `${TOPIC_ROOT}/#`, allow: true },
    { acltype: 'publishClientSend', topic: `${TOPIC_ROOT}/+/+/plan`, allow: true },
    { acltype: 'publishClientSend', topic: `${TOPIC_ROOT}/+/+/+/+/stored`, allow: true },
    { acltype: 'publishClientSend', topic: CONTROLLER_STATUS_TOPIC, allow: true },
  ];
}

/**
 * A job's password: HMAC-SHA256 of the job's id and its creation's salt under the controller's key.
 * Derived, not stored: the controller can re-create any job's identities (a broker that lost them, a
 * new leader) without reading a Secret back; a job's credential says nothing about another's, nor
 * about an earlier job of the same name.
 */
export function jobPassword(key: Buffer | string, j: JobId & { readonly salt?: string | undefined }): string {
  const h = createHmac('sha256', key);
  if (j.salt === undefined) h.update(`optimus-job-credential/v1\n${j.namespace}/${j.job}`);
  else h.update(`optimus-job-credential/v2\n${j.namespace}/${j.job}\n${j.salt}`);
  return h.digest('base64url');
}
