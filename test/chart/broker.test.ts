/**
 * The bundled Mosquitto: authentication always on, per-role credentials, an ACL that confines
 * sidecars to publishing their own telemetry, and queue limits that survive QoS 1 bursts.
 * When Mosquitto is installed (CI installs it), the RENDERED configuration, ACL and init script run
 * against a real broker: what the chart claims is what the broker enforces.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerConfig, localisePaths, parseAcl, parseConf, type BrokerConfig } from './broker-config';
import { ensureHelm } from './helm';
import { findObject, renderChart, type K8sObject } from './render';

let base: K8sObject[];
let broker: BrokerConfig;
beforeAll(async () => {
  ensureHelm();
  base = await renderChart();
  broker = brokerConfig(base);
});

describe('broker configuration as rendered', () => {
  it('refuses anonymous clients and uses hashed passwords with an ACL', () => {
    const conf = parseConf(broker.conf);
    expect(conf.get('allow_anonymous')).toEqual(['false']);
    expect(conf.get('password_file')).toEqual(['/mosquitto/auth/passwd']);
    expect(conf.get('acl_file')).toEqual(['/mosquitto/auth/acl']);
    expect(broker.authScript).toContain('mosquitto_passwd -U');
  });

  it('queues enough QoS 1 messages for bursts and persists them', () => {
    const conf = parseConf(broker.conf);
    expect(Number(conf.get('max_queued_messages')?.[0])).toBeGreaterThanOrEqual(100_000);
    expect(Number(conf.get('max_inflight_messages')?.[0])).toBeGreaterThan(20);
    expect(conf.get('persistence')).toEqual(['true']);
  });

  it('gives the sidecar publish-only rights on task telemetry and the controller read on everything', () => {
    expect(Object.fromEntries(parseAcl(broker.acl))).toEqual({
      controller: ['read optimus/v1/#', 'write optimus/v1/+/+/plan', 'write optimus/v1/controller/status'],
      sidecar: ['write optimus/v1/+/+/+/+/metrics', 'write optimus/v1/+/+/+/+/status'],
    });
  });

  it('generates distinct strong passwords per role and wires them to their users', () => {
    const { controller, sidecar } = broker.credentials;
    expect(controller.username).toBe('controller');
    expect(sidecar.username).toBe('sidecar');
    expect(controller.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(sidecar.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(controller.password).not.toBe(sidecar.password);
    const env = (
      findObject(base, 'Deployment', '-controller')['spec'] as {
        template: {
          spec: { containers: { env: { name: string; value?: string; valueFrom?: unknown }[] }[] };
        };
      }
    ).template.spec.containers[0]!.env;
    const byName = new Map(env.map((e) => [e.name, e]));
    expect(byName.get('OPTIMUS_BROKER_USERNAME')?.valueFrom).toEqual({
      secretKeyRef: { name: 'optimus-broker-controller', key: 'username' },
    });
    expect(byName.get('OPTIMUS_SIDECAR_CREDENTIALS_SECRET')?.value).toBe('optimus-broker-sidecar');
  });

  it('copies the sidecar credentials into the job namespaces, with the same password', async () => {
    const objs = await renderChart({ set: ['sidecar.credentialsNamespaces={ml,research}'] });
    const copies = objs.filter((o) => o.kind === 'Secret' && o.metadata.name === 'optimus-broker-sidecar');
    expect(copies.map((o) => o.metadata.namespace).sort()).toEqual(['ml', 'optimus-system', 'research']);
    expect(new Set(copies.map((o) => JSON.stringify(o['data']))).size).toBe(1);
    const controllerCopies = objs.filter(
      (o) => o.kind === 'Secret' && o.metadata.name === 'optimus-broker-controller',
    );
    expect(controllerCopies).toHaveLength(1);
  });

  it('runs Mosquitto hardened', () => {
    const spec = (
      findObject(base, 'Deployment', '-mosquitto')['spec'] as {
        template: { spec: { containers: { securityContext: unknown }[]; securityContext: unknown } };
      }
    ).template.spec;
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1883 });
    expect(spec.containers[0]!.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('deploys no broker and uses the given Secrets with broker.external.url', async () => {
    const objs = await renderChart({ valuesFiles: ['ci/external-broker-values.yaml'] });
    expect(objs.filter((o) => o.metadata.name.includes('mosquitto'))).toEqual([]);
    expect(objs.filter((o) => o.kind === 'Secret' && o.metadata.name.includes('broker'))).toEqual([]);
    const text = JSON.stringify(findObject(objs, 'Deployment', '-controller'));
    expect(text).toContain('"value":"mqtts://emqx.messaging.svc:8883"');
    expect(text).toContain('"name":"optimus-mqtt-controller"');
    expect(text).toContain('"name":"OPTIMUS_SIDECAR_CREDENTIALS_SECRET","value":"optimus-mqtt-sidecar"');
    expect(text).toContain('"name":"OPTIMUS_SIDECAR_BROKER_URL","value":"mqtts://mqtt.example.com:8883"');
    expect(text).toContain('"name":"OPTIMUS_BROKER_CA_FILE"');
  });
});

const hasMosquitto =
  spawnSync('mosquitto', ['-h'], { stdio: 'ignore' }).error === undefined &&
  spawnSync('mosquitto_passwd', ['-h'], { stdio: 'ignore' }).error === undefined;

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolvePort(typeof addr === 'object' && addr !== null ? addr.port : 0));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasMosquitto)('the rendered broker configuration on a real Mosquitto', () => {
  let dir = '';
  let proc: ChildProcess | undefined;
  let url = '';
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'optimus-chart-broker-'));
    for (const d of [
      'mosquitto/config',
      'mosquitto/auth',
      'mosquitto/data',
      'credentials/controller',
      'credentials/sidecar',
    ]) {
      mkdirSync(join(dir, d), { recursive: true });
    }
    for (const role of ['controller', 'sidecar'] as const) {
      writeFileSync(join(dir, 'credentials', role, 'username'), broker.credentials[role].username);
      writeFileSync(join(dir, 'credentials', role, 'password'), broker.credentials[role].password);
    }
    writeFileSync(join(dir, 'mosquitto/config/acl'), broker.acl);
    const port = await freePort();
    url = `mqtt://127.0.0.1:${port}`;
    let conf = localisePaths(broker.conf, dir).replace(/^listener \d+$/m, `listener ${port} 127.0.0.1`);
    // Started as root, Mosquitto would drop to user `mosquitto` and lose access to the 0600 files.
    if (process.getuid?.() === 0) conf += '\nuser root\n';
    writeFileSync(join(dir, 'mosquitto/config/mosquitto.conf'), conf);
    const init = spawnSync('sh', ['-ec', localisePaths(broker.authScript, dir)], { encoding: 'utf8' });
    expect(init.status, init.stderr).toBe(0);
    proc = spawn('mosquitto', ['-c', join(dir, 'mosquitto/config/mosquitto.conf')], { stdio: 'ignore' });
    for (let i = 0; i < 50; i++) {
      const probe = await mqtt
        .connectAsync(url, { ...broker.credentials.controller, reconnectPeriod: 0, connectTimeout: 500 })
        .catch(() => null);
      if (probe !== null) {
        await probe.endAsync();
        return;
      }
      await sleep(100);
    }
    throw new Error('mosquitto did not start with the rendered configuration');
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    proc?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const connect = async (creds: { username?: string; password?: string }): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(url, { ...creds, reconnectPeriod: 0, connectTimeout: 2000 });
    clients.push(c);
    return c;
  };
  /**
   * Topics a controller-user subscriber receives after `act`: waits for `expected` messages (at most
   * 5 s), then 100 ms more for any extra. Tests that check a publish is dropped end `act` with an
   * allowed "sentinel" publish from the same client: the broker keeps per-client order, so once the
   * sentinel is in, a forbidden message that had been let through would be in too.
   */
  const receivedDuring = async (act: () => Promise<unknown>, expected: number): Promise<string[]> => {
    const spy = await connect(broker.credentials.controller);
    const got: string[] = [];
    spy.on('message', (topic) => got.push(topic));
    await spy.subscribeAsync('optimus/v1/#', { qos: 1 });
    await act();
    for (let i = 0; i < 100 && got.length < expected; i++) await sleep(50);
    await sleep(100);
    return got;
  };
  const SENTINEL = 'optimus/v1/ml/sentinel/worker/0/metrics';

  it('stores only salted hashes in the password file', () => {
    const passwd = readFileSync(join(dir, 'mosquitto/auth/passwd'), 'utf8');
    expect(passwd).not.toContain(broker.credentials.sidecar.password);
    expect(passwd).not.toContain(broker.credentials.controller.password);
    expect(
      passwd
        .trim()
        .split('\n')
        .map((l) => l.split(':')[0]),
    ).toEqual(['controller', 'sidecar']);
    expect(passwd).toMatch(/^sidecar:\$[67]\$/m);
  });

  it('refuses anonymous clients and wrong passwords', async () => {
    await expect(connect({})).rejects.toThrow(/Not authorized|Bad username/i);
    await expect(connect({ username: 'sidecar', password: 'guess' })).rejects.toThrow(
      /Not authorized|Bad username/i,
    );
  });

  it('delivers a sidecar metrics record to the controller', async () => {
    const sidecar = await connect(broker.credentials.sidecar);
    const topic = 'optimus/v1/ml/resnet/worker/0/metrics';
    const got = await receivedDuring(() => sidecar.publishAsync(topic, '{"v":1}', { qos: 1 }), 1);
    expect(got).toEqual([topic]);
  });

  it('does not let a sidecar forge plans or the controller status', async () => {
    const sidecar = await connect(broker.credentials.sidecar);
    const got = await receivedDuring(async () => {
      await sidecar.publishAsync('optimus/v1/ml/resnet/plan', '{}', { qos: 1 });
      await sidecar.publishAsync('optimus/v1/controller/status', '{}', { qos: 1 });
      await sidecar.publishAsync(SENTINEL, '{}', { qos: 1 });
    }, 1);
    expect(got).toEqual([SENTINEL]);
  });

  it('does not let a sidecar read anything, not even other tasks telemetry', async () => {
    // Mosquitto 2.0 grants the SUBSCRIBE and enforces read access on delivery.
    const reader = await connect(broker.credentials.sidecar);
    const got: string[] = [];
    reader.on('message', (topic) => got.push(topic));
    await reader.subscribeAsync('optimus/v1/#', { qos: 1 });
    const other = await connect(broker.credentials.sidecar);
    const controller = await connect(broker.credentials.controller);
    // A controller-user spy sees both messages: by then the broker has routed them to the reader too.
    const spied = await receivedDuring(async () => {
      await other.publishAsync('optimus/v1/ml/bert/worker/1/metrics', '{"v":1}', { qos: 1 });
      await controller.publishAsync('optimus/v1/ml/bert/plan', '{}', { qos: 1 });
    }, 2);
    expect(spied).toHaveLength(2);
    expect(got).toEqual([]);
  });

  it('accepts the helm test pod publish command (mosquitto_pub -L URL/TOPIC as the sidecar user)', async () => {
    const topic = 'optimus/v1/optimus-system/helm-test/worker/0/metrics';
    const { username, password } = broker.credentials.sidecar;
    const got = await receivedDuring(async () => {
      const pub = spawnSync(
        'mosquitto_pub',
        ['-L', `${url}/${topic}`, '-u', username, '-P', password, '-q', '1', '-m', '{"v":1}'],
        {
          encoding: 'utf8',
        },
      );
      expect(pub.status, pub.stderr).toBe(0);
    }, 1);
    expect(got).toEqual([topic]);
  });

  it('queues a QoS 1 burst of 3,000 records for an offline controller session (default limit: 1,000)', async () => {
    const opts = {
      ...broker.credentials.controller,
      clientId: 'controller-burst',
      clean: false,
      reconnectPeriod: 0,
    };
    const first = await mqtt.connectAsync(url, opts);
    await first.subscribeAsync('optimus/v1/+/+/+/+/metrics', { qos: 1 });
    await first.endAsync();
    const sidecar = await connect(broker.credentials.sidecar);
    const burst = 3000;
    await Promise.all(
      Array.from({ length: burst }, (_, i) =>
        sidecar.publishAsync('optimus/v1/ml/burst/worker/0/metrics', String(i), { qos: 1 }),
      ),
    );
    const seen = new Set<string>();
    // Attach the handler before the session resumes: queued messages arrive right after CONNACK.
    const back = mqtt.connect(url, opts);
    back.on('message', (_topic, payload) => seen.add(payload.toString()));
    clients.push(back);
    for (let i = 0; i < 200 && seen.size < burst; i++) await sleep(50);
    expect(seen.size).toBe(burst);
  });

  it('lets the controller publish plans but not impersonate a task', async () => {
    const controller = await connect(broker.credentials.controller);
    const got = await receivedDuring(async () => {
      await controller.publishAsync('optimus/v1/ml/resnet/plan', '{}', { qos: 1 });
      await controller.publishAsync('optimus/v1/ml/resnet/worker/0/metrics', '{}', { qos: 1 });
      await controller.publishAsync('optimus/v1/ml/other/plan', '{}', { qos: 1 });
    }, 2);
    expect(got).toEqual(['optimus/v1/ml/resnet/plan', 'optimus/v1/ml/other/plan']);
  });
});
