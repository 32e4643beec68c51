/**
 * Pulls the bundled broker's rendered configuration out of the chart's objects, and rewrites its
 * in-container paths so the same files can run against a local Mosquitto in tests.
 */
import { findObject, type K8sObject } from './render';

export interface BrokerConfig {
  /** mosquitto.conf as rendered. */
  readonly conf: string;
  /** The init container's shell script that creates the dynamic-security file. */
  readonly initScript: string;
  /** The controller's credentials, from the generated Secret (the only broker Secret). */
  readonly controller: { username: string; password: string };
}

const decode = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

export function brokerConfig(objects: readonly K8sObject[]): BrokerConfig {
  const cm = findObject(objects, 'ConfigMap', '-mosquitto');
  const data = cm['data'] as Record<string, string>;
  const deploy = findObject(objects, 'Deployment', '-mosquitto');
  const spec = (
    deploy['spec'] as { template: { spec: { initContainers: { name: string; command: string[] }[] } } }
  ).template.spec;
  const init = spec.initContainers.find((c) => c.name === 'dynamic-security');
  if (init === undefined) throw new Error('the broker Deployment has no `dynamic-security` init container');
  const s = findObject(objects, 'Secret', '-broker-controller')['data'] as Record<string, string>;
  return {
    conf: data['mosquitto.conf'] ?? '',
    initScript: init.command[init.command.length - 1] ?? '',
    controller: { username: decode(s['username']), password: decode(s['password']) },
  };
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

/** Where Debian's package puts the dynamic-security plugin (the image has it under /usr/lib). */
export const DEBIAN_DYNSEC_PLUGIN = '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so';

/** Rewrites the container paths (/mosquitto/..., /credentials/..., the plugin) into a local directory. */
export function localisePaths(text: string, dir: string): string {
  return text
    .replace(/^plugin \S+$/m, `plugin ${DEBIAN_DYNSEC_PLUGIN}`)
    .replaceAll('/mosquitto/', `${dir}/mosquitto/`)
    .replaceAll('/credentials/', `${dir}/credentials/`);
}
