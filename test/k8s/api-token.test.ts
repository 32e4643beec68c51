/**
 * Kubernetes mode's API token (issue 28, ADR 0031): `run` refuses to start without one unless told to
 * run insecure; with one, every route but the probes needs it, reads included; the API listens where
 * configured and refuses a DNS-rebinding Host.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../controller/src/local/broker';
import { startRun } from './backend-fixture';
import { startTestCluster, type TestCluster } from './cluster-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
  [run, broker, cluster] = [undefined, undefined, undefined];
});

async function setUp(): Promise<{ cluster: TestCluster; broker: EmbeddedBroker }> {
  cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 32, memory: 128 * GiB } }]);
  broker = await startEmbeddedBroker(0);
  return { cluster, broker };
}

const statusOf = (url: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(url);
    http
      .get({ host: u.hostname, port: u.port, path, headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });

describe('Kubernetes API token', () => {
  it('refuses to start without a token unless OPTIMUS_API_INSECURE_NO_TOKEN=true', async () => {
    const { cluster, broker } = await setUp();
    await expect(
      startRun(cluster, broker.url, { env: { OPTIMUS_API_INSECURE_NO_TOKEN: '' } }),
    ).rejects.toThrow(/OPTIMUS_API_TOKEN_FILE \(--api-token-file\) is required in Kubernetes mode/);
  });

  it('with a token: every route but the probes needs it, reads included; listens where configured; no rebinding', async () => {
    const { cluster, broker } = await setUp();
    const file = join(mkdtempSync(join(tmpdir(), 'k8s-token-')), 'token');
    writeFileSync(file, 'cluster-token\n');
    run = await startRun(cluster, broker.url, {
      env: {
        OPTIMUS_API_INSECURE_NO_TOKEN: '',
        OPTIMUS_API_TOKEN_FILE: file,
        OPTIMUS_HTTP_HOST: '127.0.0.1',
      },
    });
    expect(run.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const bearer = { authorization: 'Bearer cluster-token' };
    for (const path of [
      '/api/v1/jobs',
      '/api/v1/overview',
      '/api/v1/events',
      '/metrics',
      '/api/v1/openapi.json',
    ])
      expect(await statusOf(run.httpUrl, path), path).toBe(401);
    expect(await statusOf(run.httpUrl, '/healthz')).toBe(200);
    expect(await statusOf(run.httpUrl, '/readyz')).toBe(200);
    expect(await statusOf(run.httpUrl, '/api/v1/jobs', bearer)).toBe(200);
    expect(await statusOf(run.httpUrl, '/metrics', bearer)).toBe(200);
    // A Service name is answered; an attacker's name is not, token or not.
    const port = new URL(run.httpUrl).port;
    const svc = `optimus-controller.optimus-system.svc.cluster.local:${port}`;
    expect(await statusOf(run.httpUrl, '/api/v1/jobs', { ...bearer, host: svc })).toBe(200);
    expect(await statusOf(run.httpUrl, '/api/v1/jobs', { ...bearer, host: 'attacker.example' })).toBe(403);
  });
});
