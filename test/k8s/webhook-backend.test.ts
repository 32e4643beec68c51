import https from 'node:https';
import { readFileSync } from 'node:fs';
import { generate } from 'selfsigned';
import type { V1Pod } from '@kubernetes/client-node';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIDECAR_RESOURCES } from '../../controller/src/k8s/webhook/sidecar-config';
import { startTestCluster } from './cluster-fixture';
import { startBackend } from './backend-fixture';

const fixture = readFileSync(
  new URL('../../controller/src/k8s/webhook/fixtures/opt-in.json', import.meta.url),
  'utf8',
);

function review(port: number, ca: string): Promise<{ response: { patch: string } }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: '/mutate', method: 'POST', ca, servername: 'localhost' },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(JSON.parse(text) as { response: { patch: string } }));
      },
    );
    req.on('error', reject);
    req.end(fixture);
  });
}

describe('webhook served by the backend: native sidecars decided from the API server version', () => {
  it.each([
    { gitVersion: 'v1.28.5', native: false },
    { gitVersion: 'v1.30.1', native: true },
  ])('$gitVersion → native: $native', async ({ gitVersion, native }) => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
    });
    const cluster = await startTestCluster([], { gitVersion });
    const backend = startBackend(cluster, 'c', {
      leaderElection: { enabled: false },
      webhook: {
        port: 0,
        host: '127.0.0.1',
        cert: pems.cert,
        key: pems.private,
        sidecar: {
          image: 'sidecar:1',
          resources: DEFAULT_SIDECAR_RESOURCES,
          brokerUrl: 'mqtt://b:1883',
          native: 'auto',
        },
      },
    });
    try {
      await backend.start();
      const out = await review(backend.webhookPort()!, pems.cert);
      const ops = JSON.parse(Buffer.from(out.response.patch, 'base64').toString()) as Operation[];
      expect(ops.some((o) => o.path === '/spec/initContainers')).toBe(native);
      // The API server validates the pod the webhook's patch produced: the strict double must accept it.
      const pod = (JSON.parse(fixture) as { request: { object: V1Pod } }).request.object;
      const mutated = fastJsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
      const namespace = pod.metadata?.namespace ?? 'team-a';
      await cluster.clients.core.createNamespace({ body: { metadata: { name: namespace } } });
      const created = await cluster.clients.core.createNamespacedPod({ namespace, body: mutated });
      expect(created.spec?.containers.map((c) => c.name)).toEqual(
        mutated.spec?.containers.map((c) => c.name),
      );
    } finally {
      await backend.stop();
      await cluster.close();
    }
  });
});
