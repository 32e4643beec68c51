/**
 * Who may say what on the local mode's embedded broker (ADR 0031), as data and pure functions: the
 * rules of the chart's Mosquitto (`broker-access/job-identity.ts`, ADR 0013) applied per task.
 *
 * - The controller (client id = user name `optimus-controller-local`, reserved) reads every Optimus
 *   topic and alone publishes plans, watermarks (`stored`) and its own status — the chart's
 *   `controllerAcls()`, unchanged.
 * - A task (client id = user name `optimus.<ns>.<job>.<role>.<index>`) publishes only its own
 *   `metrics` and `status` (its Last Will too) and reads only its own watermark and the controller's
 *   status. The chart grants a job's tasks their whole job's topics (one role per job); here each
 *   task gets exactly its own, which aedes' per-client hooks allow.
 * - An observer (user `optimus-observer`, any client id starting so) reads every Optimus topic and
 *   publishes nothing: monitoring subscribers and tests.
 * - Anyone else: nothing (anonymous clients are refused at CONNECT).
 */
import {
  CONTROLLER_STATUS_TOPIC,
  metricsTopic,
  statusTopic,
  storedTopic,
  taskClientId,
  taskIdSchema,
  type TaskId,
} from '../../../shared/src/topics';
import { controllerAcls } from '../broker-access/job-identity';

export const LOCAL_CONTROLLER_ID = 'optimus-controller-local' as const;
export const OBSERVER_USERNAME = 'optimus-observer' as const;
/** No client but the controller may use an id starting so (it is the controller's session). */
export const RESERVED_PREFIX = 'optimus-controller';

export type BrokerIdentity =
  | { readonly kind: 'controller' }
  | { readonly kind: 'observer' }
  | { readonly kind: 'task'; readonly task: TaskId };

/** The identity a user name claims, or null (unknown users are refused). */
export function identityOf(username: string): BrokerIdentity | null {
  if (username === LOCAL_CONTROLLER_ID) return { kind: 'controller' };
  if (username === OBSERVER_USERNAME) return { kind: 'observer' };
  const m = /^optimus\.([^.]+)\.([^.]+)\.([^.]+)\.(\d{1,7})$/.exec(username);
  if (!m) return null;
  const task = taskIdSchema.safeParse({ namespace: m[1], job: m[2], role: m[3], index: Number(m[4]) });
  return task.success && taskClientId(task.data) === username ? { kind: 'task', task: task.data } : null;
}

/** Whether `clientId` is one this identity may connect under (ids are sessions: never another's). */
export function clientIdAllowed(id: BrokerIdentity, username: string, clientId: string): boolean {
  if (id.kind === 'observer') return clientId.startsWith(OBSERVER_USERNAME);
  return clientId === username;
}

const READ_ALL = 'optimus/v1/#';
const controllerSends = controllerAcls()
  .filter((a) => a.acltype === 'publishClientSend')
  .map((a) => a.topic);

/** Topic patterns the identity may publish to. */
export function publishPatterns(id: BrokerIdentity): readonly string[] {
  if (id.kind === 'controller') return controllerSends;
  if (id.kind === 'observer') return [];
  return [metricsTopic(id.task), statusTopic(id.task)];
}

/** Topic patterns the identity may subscribe to and receive from. */
export function readPatterns(id: BrokerIdentity): readonly string[] {
  if (id.kind === 'task') return [storedTopic(id.task), CONTROLLER_STATUS_TOPIC];
  return [READ_ALL];
}

export const mayPublish = (id: BrokerIdentity, topic: string): boolean =>
  publishPatterns(id).some((p) => topicMatches(p, topic));

/** A subscription is allowed only when everything it can match is readable. */
export const maySubscribe = (id: BrokerIdentity, filter: string): boolean =>
  readPatterns(id).some((p) => filterCovers(p, filter));

export const mayReceive = (id: BrokerIdentity, topic: string): boolean =>
  readPatterns(id).some((p) => topicMatches(p, topic));

/** MQTT matching of a concrete topic against a filter (`+` one level, `#` the rest; `$…` only literally). */
export function topicMatches(filter: string, topic: string): boolean {
  if (topic.startsWith('$') && !filter.startsWith('$')) return false;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** Whether every topic `filter` can match is matched by `pattern` (so subscribing to it reveals nothing more). */
export function filterCovers(pattern: string, filter: string): boolean {
  if (filter.startsWith('$') && !pattern.startsWith('$')) return false;
  const p = pattern.split('/');
  const f = filter.split('/');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '#') return true;
    if (i >= f.length) return false;
    if (f[i] === '#') return false;
    if (p[i] === '+') continue;
    if (f[i] === '+' || f[i] !== p[i]) return false;
  }
  return p.length === f.length;
}
