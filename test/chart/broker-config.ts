/**
 * Pulls the bundled broker's rendered configuration out of the chart's objects, and rewrites its
 * in-container paths so the same files can run against a local Mosquitto in tests.
 */
import { findObject, type K8sObject } from './render';

export interface BrokerConfig {
  /** mosquitto.conf as rendered. */
  readonly conf: string;
  /** The ACL file as rendered. */
  readonly acl: string;
  /** The init container's shell script that builds the hashed password file. */
  readonly authScript: string;
  /** Plain credentials per role, from the generated Secrets. */
  readonly credentials: Readonly<Record<'controller' | 'sidecar', { username: string; password: string }>>;
}

const decode = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

export function brokerConfig(objects: readonly K8sObject[]): BrokerConfig {
  const cm = findObject(objects, 'ConfigMap', '-mosquitto');
  const data = cm['data'] as Record<string, string>;
  const deploy = findObject(objects, 'Deployment', '-mosquitto');
  const spec = (
    deploy['spec'] as { template: { spec: { initContainers: { name: string; command: string[] }[] } } }
  ).template.spec;
  const init = spec.initContainers.find((c) => c.name === 'auth');
  if (init === undefined) throw new Error('the broker Deployment has no `auth` init container');
  const secret = (role: string): { username: string; password: string } => {
    const s = findObject(objects, 'Secret', `-broker-${role}`)['data'] as Record<string, string>;
    return { username: decode(s['username']), password: decode(s['password']) };
  };
  return {
    conf: data['mosquitto.conf'] ?? '',
    acl: data['acl'] ?? '',
    authScript: init.command[init.command.length - 1] ?? '',
    credentials: { controller: secret('controller'), sidecar: secret('sidecar') },
  };
}

/** Parses an ACL file into `user -> ["read optimus/v1/#", ...]` (comments and blanks dropped). */
export function parseAcl(acl: string): Map<string, string[]> {
  const users = new Map<string, string[]>();
  let current = '';
  for (const raw of acl.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [word, ...rest] = line.split(/\s+/);
    if (word === 'user') {
      current = rest.join(' ');
      users.set(current, []);
    } else if (word === 'topic') {
      users.get(current)?.push(rest.join(' '));
    }
  }
  return users;
}

/** Parses `key value` lines of mosquitto.conf (repeated keys keep every value). */
export function parseConf(conf: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of conf.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [key, ...rest] = line.split(/\s+/);
    if (key === undefined) continue;
    out.set(key, [...(out.get(key) ?? []), rest.join(' ')]);
  }
  return out;
}

/** Rewrites the container paths (/mosquitto/..., /credentials/...) into a local directory. */
export function localisePaths(text: string, dir: string): string {
  return text
    .replaceAll('/mosquitto/', `${dir}/mosquitto/`)
    .replaceAll('/credentials/', `${dir}/credentials/`);
}
