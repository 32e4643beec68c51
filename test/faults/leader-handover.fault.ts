/**
 * High availability that keeps telemetry (issue 13): two real controller processes (`optimus
 * kubernetes run`) against the Kubernetes API double and Debian's Mosquitto with the chart's
 * configuration. Both use one MQTT client id; the leader is killed (`kill -9`), and the replica that
 * takes the Lease over resumes the dead leader's persistent session: the records queued for it while
 * no controller led reach the new leader. A real sidecar publishes throughout, with its job's own
 * broker identity (the Secret the controller created), and loses nothing either.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configMapNameOf, KEY_RECORDS, parseRecords } from '../../controller/src/k8s/store/cluster-store';
import { jobBrokerSecretName } from '../../controller/src/k8s/broker/broker-credentials';
import { hasMosquitto, startChartMosquitto, type ChartMosquitto } from '../chart/chart-mosquitto';
import { startTestCluster, type TestCluster } from '../k8s/cluster-fixture';
import { killAll, sleep, start, until, type Child } from './harness/children';
import { publishForgetfully } from './harness/forgetful-publisher';
import { REPO } from './harness/local-mode';
import { recordFault } from './harness/tally';
import { expectAllStored, TestTask } from './harness/task';
import { taskClientId } from '../../shared/src/topics';

const root = mkdtempSync(join(tmpdir(), 'fault-ha-'));
let cluster: TestCluster | undefined;
let mosq: ChartMosquitto | undefined;
afterAll(async () => {
  await killAll();
  await mosq?.stop();
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

function kubeconfig(server: string): string {
  const file = join(root, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 'controller-token' } }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
      'current-context': 'ctx',
    }),
  );
  return file;
}

async function storedSeqs(
  c: TestCluster,
  job: string,
): Promise<Map<string, Map<number, { batch: number | null }>>> {
  const out = new Map<string, Map<number, { batch: number | null }>>();
  try {
    const cm = await c.clients.core.readNamespacedConfigMap({
      namespace: 'default',
      name: configMapNameOf(job),
    });
    for (const r of parseRecords(cm.data?.[KEY_RECORDS] ?? '', 'default', job)) {
      const key = `${r.task.namespace}/${r.task.job}/${r.task.role}/${r.task.index}`;
      const m = out.get(key) ?? new Map<number, { batch: number | null }>();
      m.set(r.record.seq, r.record);
      out.set(key, m);
    }
  } catch {
    // no ConfigMap yet
  }
  return out;
}

describe.skipIf(!hasMosquitto)('leader handover', () => {
  it('the new leader resumes the dead leader’s MQTT session: records queued meanwhile reach it', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 64, memory: 256 * 1024 ** 3 } }]);
    mosq = await startChartMosquitto();
    const passwordFile = join(root, 'controller.password');
    writeFileSync(passwordFile, mosq.config.controller.password);
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfig(cluster.double.url),
      OPTIMUS_BROKER_URL: mosq.url,
      OPTIMUS_BROKER_USERNAME: mosq.config.controller.username,
      OPTIMUS_BROKER_PASSWORD_FILE: passwordFile,
      OPTIMUS_BROKER_IDENTITIES: 'dynsec',
      POD_NAMESPACE: 'optimus-system',
      OPTIMUS_HTTP_PORT: '0',
      // These tests are about scheduling, not the API's token (test/k8s/api-token.test.ts is).
      OPTIMUS_API_INSECURE_NO_TOKEN: 'true',
      OPTIMUS_LOG_LEVEL: 'info',
    };
    const replica = (name: string): Child =>
      start(process.execPath, ['--import', 'tsx', 'controller/src/cli/main.ts', 'kubernetes', 'run'], {
        cwd: REPO,
        env: { ...env, POD_NAME: name },
      });
    const replicas = new Map([
      ['replica-a', replica('replica-a')],
      ['replica-b', replica('replica-b')],
    ]);
    const leading = (c: Child): boolean => /"msg":"kubernetes mode ready"/.test(c.stderr());
    await until('a leader', () => [...replicas.values()].some(leading), 60_000);
    const [leaderName, leader] = [...replicas].find(([, c]) => leading(c))!;
    const [, follower] = [...replicas].find(([n]) => n !== leaderName)!;

    await cluster.submit({ name: 'ha' });
    let password = '';
    await until(
      'the job’s broker credential',
      async () => {
        try {
          const s = await cluster!.clients.core.readNamespacedSecret({
            namespace: 'default',
            name: jobBrokerSecretName('ha'),
          });
          password = Buffer.from(s.data?.['password'] ?? '', 'base64').toString('utf8');
          return password !== '';
        } catch {
          return false;
        }
      },
      30_000,
    );
    const taskPassword = join(root, 'ha.password');
    writeFileSync(taskPassword, password);
    const sidecar = new TestTask(
      { namespace: 'default', job: 'ha', role: 'ps', index: 0 },
      join(root, 'ps-0'),
      mosq.url,
      undefined,
      { OPTIMUS_BROKER_PASSWORD_FILE: taskPassword, OPTIMUS_MQTT_VERSION: '5' },
    );
    sidecar.start();
    for (let i = 0; i < 10; i++) {
      sidecar.write(2);
      await sleep(200);
    }
    await leader.kill9();
    // No controller leads now: what is published queues in the (one) controller session.
    const queued = await publishForgetfully(
      mosq.url,
      { namespace: 'default', job: 'ha', role: 'ps', index: 1 },
      // Slow enough that the job stays under the cluster store's per-job budget, which thins old
      // batch records (cluster-store.ts): this test counts what reached the leader, not retention.
      60,
      { username: taskClientId({ namespace: 'default', job: 'ha', role: 'ps', index: 1 }), password },
    );
    const writer = (async () => {
      while (!leading(follower)) {
        sidecar.write(2);
        await sleep(200);
      }
    })();
    await until('the other replica leads', () => leading(follower), 60_000);
    await writer;
    await sleep(1000);
    await queued.stop();
    for (let i = 0; i < 10; i++) {
      sidecar.write(2);
      await sleep(200);
    }
    const sent = queued.acknowledged;
    expect(sent.length).toBeGreaterThan(30);
    await until(
      'everything stored by the new leader',
      async () => {
        const s = await storedSeqs(cluster!, 'ha');
        return (
          (s.get('default/ha/ps/1')?.size ?? 0) >= sent.length &&
          (s.get(sidecar.key)?.size ?? 0) >= sidecar.written.length
        );
      },
      60_000,
    ).catch(() => undefined);
    const stored = await storedSeqs(cluster, 'ha');
    const kept = stored.get('default/ha/ps/1') ?? new Map();
    expect({ queued: sent.length, missing: sent.filter((s) => !kept.has(s)) }).toEqual({
      queued: sent.length,
      missing: [],
    });
    expect(await sidecar.finish()).toBe(0);
    expectAllStored(sidecar, (await storedSeqs(cluster, 'ha')).get(sidecar.key));
    recordFault({
      row: 'leader kill -9, handover to the other replica',
      sent: sent.length + sidecar.written.length,
      received: kept.size + ((await storedSeqs(cluster, 'ha')).get(sidecar.key)?.size ?? 0),
      lost: sent.filter((s) => !kept.has(s)).length,
      reused: 0,
    });
  });
});
