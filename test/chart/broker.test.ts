/**
 * The bundled Mosquitto: authentication always on, identities in the dynamic-security plugin that the
 * controller creates per job (ADR 0013), state on a volume saved on every change (ADR 0012), queues
 * that survive QoS 1 bursts. The RENDERED configuration and init script run against Debian's
 * Mosquitto (CI installs it): every refusal the chart promises is a refusal of the real broker.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynsecClient } from '../../controller/src/broker-access/dynsec-client';
import { DynsecIdentities } from '../../controller/src/broker-access/identities';
import { jobPassword, taskUsername, type JobIdentity } from '../../controller/src/broker-access/job-identity';
import { CONTROLLER_CLIENT_ID, metricsTopic, storedTopic, type TaskId } from '../../shared/src/topics';
import { brokerConfig, parseConf, type BrokerConfig } from './broker-config';
import { hasMosquitto, startChartMosquitto, type ChartMosquitto } from './chart-mosquitto';
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
  it('refuses anonymous clients; identities and ACLs come from the dynamic-security plugin', () => {
    const conf = parseConf(broker.conf);
    expect(conf.get('allow_anonymous')).toEqual(['false']);
    expect(conf.get('plugin')).toEqual(['/usr/lib/mosquitto_dynamic_security.so']);
    expect(conf.get('plugin_opt_config_file')).toEqual(['/mosquitto/data/dynamic-security.json']);
    expect(conf.has('password_file')).toBe(false);
    expect(conf.has('acl_file')).toBe(false);
    expect(broker.initScript).toContain('mosquitto_ctrl dynsec init');
  });

  it('keeps its state on a volume and saves it every second (or on every change, when asked)', async () => {
    const conf = parseConf(broker.conf);
    expect(conf.get('persistence')).toEqual(['true']);
    expect(conf.get('persistence_location')).toEqual(['/mosquitto/data/']);
    expect(conf.get('autosave_interval')).toEqual(['1']);
    expect(conf.has('autosave_on_changes')).toBe(false);
    const every = parseConf(
      brokerConfig(await renderChart({ set: ['broker.mosquitto.persistence.saveOnEveryChange=true'] })).conf,
    );
    expect([every.get('autosave_on_changes'), every.get('autosave_interval')]).toEqual([['true'], ['1']]);
    const spec = (
      findObject(base, 'Deployment', '-mosquitto')['spec'] as {
        template: { spec: { volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[] } };
      }
    ).template.spec;
    expect(spec.volumes.find((v) => v.name === 'data')?.persistentVolumeClaim).toBeDefined();
    expect(findObject(base, 'PersistentVolumeClaim', '-mosquitto')).toBeDefined();
  });

  it('queues enough QoS 1 messages for bursts', () => {
    const conf = parseConf(broker.conf);
    expect(Number(conf.get('max_queued_messages')?.[0])).toBeGreaterThanOrEqual(100_000);
    expect(Number(conf.get('max_inflight_messages')?.[0])).toBeGreaterThan(20);
  });

  it('generates one strong controller password, and no credential shared with job namespaces', async () => {
    expect(broker.controller.username).toBe('controller');
    expect(broker.controller.password).toMatch(/^[A-Za-z0-9]{32}$/);
    // The removed value that promised copies into listed namespaces is refused, not ignored.
    await expect(renderChart({ set: ['sidecar.credentialsNamespaces={ml,research}'] })).rejects.toThrow(
      /credentialsNamespaces/,
    );
    const objs = base;
    const secrets = objs.filter((o) => o.kind === 'Secret' && o.metadata.name.includes('broker'));
    expect(secrets.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'optimus-system/optimus-broker-controller',
    ]);
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
    expect(byName.get('OPTIMUS_BROKER_IDENTITIES')?.value).toBe('dynsec');
    expect(byName.has('OPTIMUS_SIDECAR_CREDENTIALS_SECRET')).toBe(false);
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
    expect(text).not.toContain('OPTIMUS_BROKER_IDENTITIES');
  });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasMosquitto)('the rendered broker configuration on a real Mosquitto', () => {
  let mosq: ChartMosquitto;
  let admin: MqttClient;
  let identities: DynsecIdentities;
  const clients: MqttClient[] = [];
  const key = 'the controller key';
  const jobA: JobIdentity = { namespace: 'ml', job: 'a', maxPs: 1, maxWorkers: 2 };
  const jobB: JobIdentity = { namespace: 'research', job: 'b', maxPs: 1, maxWorkers: 1 };
  const taskA: TaskId = { namespace: 'ml', job: 'a', role: 'worker', index: 0 };
  const taskB: TaskId = { namespace: 'research', job: 'b', role: 'worker', index: 0 };

  beforeAll(async () => {
    mosq = await startChartMosquitto({ config: broker });
    const asController = () =>
      mqtt.connectAsync(mosq.url, {
        ...broker.controller,
        clientId: CONTROLLER_CLIENT_ID,
        protocolVersion: 5,
        reconnectPeriod: 0,
      });
    // The first time, giving the controller its role makes the broker disconnect it; then it has it.
    const first = await asController();
    await new DynsecIdentities(new DynsecClient(first), broker.controller.username).ensureController();
    for (let i = 0; i < 40 && first.connected; i++) await sleep(50);
    await first.endAsync(true);
    admin = await asController();
    identities = new DynsecIdentities(new DynsecClient(admin), broker.controller.username);
    await identities.ensureController();
    await identities.ensureJob(jobA, jobPassword(key, jobA));
    await identities.ensureJob(jobB, jobPassword(key, jobB));
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await admin?.endAsync(true);
    await mosq?.stop();
  });

  const connect = async (o: IClientOptions): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(mosq.url, {
      protocolVersion: 5,
      reconnectPeriod: 0,
      connectTimeout: 2000,
      ...o,
    });
    clients.push(c);
    return c;
  };
  const asTask = (t: TaskId, job: JobIdentity, over: IClientOptions = {}): Promise<MqttClient> =>
    connect({
      username: taskUsername(t),
      password: jobPassword(key, job),
      clientId: taskUsername(t),
      ...over,
    });
  /** The broker's verdict on a QoS 1 publish: MQTT 5 PUBACK reason code (0 = accepted, 135 = not authorised). */
  const pubackCode = (c: MqttClient, topic: string): Promise<number> =>
    new Promise((resolve, reject) =>
      c.publish(topic, '{"v":1}', { qos: 1 }, (err) => {
        // mqtt.js reports a PUBACK reason ≥ 0x80 as an error carrying the code.
        const code = (err as { code?: unknown } | undefined)?.code;
        if (err && typeof code !== 'number') return reject(err);
        resolve(typeof code === 'number' ? code : 0);
      }),
    );
  /** SUBACK codes (MQTT 5: 0–2 granted QoS, 135 not authorised). */
  const subackCodes = (c: MqttClient, topics: string[], qos: 0 | 1): Promise<number[]> =>
    new Promise((resolve) =>
      c.subscribe(topics, { qos }, (err, granted) => {
        const packet = (err as { packet?: { granted?: number[] } } | null)?.packet;
        resolve(packet?.granted ?? (granted ?? []).map((g) => g.qos));
      }),
    );
  /** Topics a controller-side spy receives while `act` runs (the broker keeps per-client order). */
  const receivedDuring = async (act: () => Promise<unknown>, expected: number): Promise<string[]> => {
    const spy = await connect({ ...broker.controller, clientId: `spy-${clients.length}` });
    const got: string[] = [];
    spy.on('message', (topic) => got.push(topic));
    await spy.subscribeAsync('optimus/v1/#', { qos: 1 });
    await act();
    for (let i = 0; i < 100 && got.length < expected; i++) await sleep(50);
    await sleep(150);
    return got;
  };

  it('delivers a task’s own metrics from its own identity', async () => {
    const a = await asTask(taskA, jobA);
    const got = await receivedDuring(async () => expect(await pubackCode(a, metricsTopic(taskA))).toBe(0), 1);
    expect(got).toEqual([metricsTopic(taskA)]);
  });

  it.each([
    ["job B's metrics", metricsTopic(taskB)],
    ["job B's status", 'optimus/v1/research/b/worker/0/status'],
    ['its own plan', 'optimus/v1/ml/a/plan'],
    ["job B's plan", 'optimus/v1/research/b/plan'],
    ["the controller's status", 'optimus/v1/controller/status'],
    ['a watermark (only the controller confirms)', storedTopic(taskA)],
  ])('refuses job A’s credential publishing to %s', async (_n, topic) => {
    const a = await asTask({ ...taskA, index: 1 }, jobA);
    const sentinel = metricsTopic({ ...taskA, index: 1 });
    const got = await receivedDuring(async () => {
      expect(await pubackCode(a, topic)).toBe(135);
      await pubackCode(a, sentinel);
    }, 1);
    expect(got).toEqual([sentinel]);
  });

  it('refuses job A’s credential subscribing to `#` or to job B’s topics, and delivers it nothing', async () => {
    const a = await asTask({ ...taskA, role: 'ps' }, jobA);
    const got: string[] = [];
    a.on('message', (t) => got.push(t));
    expect(await subackCodes(a, ['#', 'optimus/v1/#', 'optimus/v1/research/b/+/+/stored'], 1)).toEqual([
      135, 135, 135,
    ]);
    const b = await asTask(taskB, jobB);
    await pubackCode(b, metricsTopic(taskB));
    await sleep(300);
    expect(got).toEqual([]);
  });

  it('lets a task read its own watermark and the controller status, nothing else', async () => {
    await admin.publishAsync(storedTopic(taskA), '{"v":1,"from":0,"through":9,"ts":1}', {
      qos: 1,
      retain: true,
    });
    const a = await asTask(taskA, jobA, { clientId: taskUsername(taskA), clean: true });
    const got: string[] = [];
    a.on('message', (t) => got.push(t));
    expect(await subackCodes(a, [storedTopic(taskA), 'optimus/v1/controller/status'], 0)).toEqual([0, 0]);
    for (let i = 0; i < 40 && got.length === 0; i++) await sleep(50);
    expect(got).toContain(storedTopic(taskA));
  });

  it.each([
    ["the controller's client id", CONTROLLER_CLIENT_ID],
    ["a task of job B's client id", taskUsername(taskB)],
    ["a sibling task's client id", taskUsername({ ...taskA, index: 1 })],
    ['an id of its own choosing', 'anything'],
  ])('refuses job A’s credential connecting under %s (no session takeover)', async (_n, clientId) => {
    await expect(asTask(taskA, jobA, { clientId })).rejects.toThrow(/Not authorized|Bad username/i);
    expect(admin.connected).toBe(true);
  });

  it('refuses anonymous clients, wrong passwords and another job’s password', async () => {
    await expect(connect({ clientId: 'anon' })).rejects.toThrow(/Not authorized|Bad username/i);
    await expect(asTask(taskA, jobA, { password: 'guess' })).rejects.toThrow(/Not authorized|Bad username/i);
    await expect(asTask(taskA, jobB)).rejects.toThrow(/Not authorized|Bad username/i);
  });

  it('removes a job’s identities with the job: its credential is refused afterwards', async () => {
    const gone: JobIdentity = { namespace: 'ml', job: 'gone', maxPs: 1, maxWorkers: 1 };
    const t: TaskId = { namespace: 'ml', job: 'gone', role: 'worker', index: 0 };
    await identities.ensureJob(gone, jobPassword(key, gone));
    (await asTask(t, gone)).end(true);
    await identities.removeJob(gone);
    await expect(asTask(t, gone)).rejects.toThrow(/Not authorized|Bad username/i);
  });

  it('keeps the QoS 1 messages it acknowledged a second before a kill -9, and the identities', async () => {
    const session = {
      ...broker.controller,
      clientId: 'controller-queue',
      clean: false,
      protocolVersion: 5 as const,
      properties: { sessionExpiryInterval: 3600 },
    };
    const first = await mqtt.connectAsync(mosq.url, { ...session, reconnectPeriod: 0 });
    await first.subscribeAsync('optimus/v1/+/+/+/+/metrics', { qos: 1 });
    await first.endAsync();
    const a = await asTask({ ...taskA, role: 'scheduler' }, jobA);
    for (let i = 0; i < 50; i++)
      expect(await pubackCode(a, metricsTopic({ ...taskA, role: 'scheduler' }))).toBe(0);
    await a.endAsync(true);
    // One save after the last PUBACK (autosave_interval 1; with the former 60 s these 50 were lost),
    // waited for on the database file rather than a fixed sleep: a loaded machine delays the save.
    const acked = Date.now();
    const db = join(mosq.dir, 'mosquitto/data/mosquitto.db');
    const savedAfter = (): boolean => existsSync(db) && statSync(db).mtimeMs > acked + 50;
    for (let i = 0; i < 200 && !savedAfter(); i++) await sleep(50);
    expect(savedAfter(), 'Mosquitto saved its state within 10 s').toBe(true);
    await mosq.kill9();
    await mosq.restart();
    const seen: string[] = [];
    const back = mqtt.connect(mosq.url, { ...session, reconnectPeriod: 0 });
    back.on('message', (topic) => seen.push(topic));
    clients.push(back);
    for (let i = 0; i < 100 && seen.length < 50; i++) await sleep(50);
    expect(seen).toHaveLength(50);
    // The identities survived too (the dynamic-security file is on the data volume).
    (await asTask(taskB, jobB)).end(true);
  });

  it('queues a QoS 1 burst of 3,000 records for an offline controller session (default limit: 1,000)', async () => {
    const opts = { ...broker.controller, clientId: 'controller-burst', clean: false, reconnectPeriod: 0 };
    const first = await mqtt.connectAsync(mosq.url, opts);
    await first.subscribeAsync('optimus/v1/+/+/+/+/metrics', { qos: 1 });
    await first.endAsync();
    const b = await asTask({ ...taskB, role: 'ps' }, jobB, { protocolVersion: 4 });
    const burst = 3000;
    await Promise.all(
      Array.from({ length: burst }, (_, i) =>
        b.publishAsync(metricsTopic({ ...taskB, role: 'ps' }), String(i), { qos: 1 }),
      ),
    );
    const seen = new Set<string>();
    const back = mqtt.connect(mosq.url, opts);
    back.on('message', (_topic, payload) => seen.add(payload.toString()));
    clients.push(back);
    for (let i = 0; i < 200 && seen.size < burst; i++) await sleep(50);
    expect(seen.size).toBe(burst);
  });
});
