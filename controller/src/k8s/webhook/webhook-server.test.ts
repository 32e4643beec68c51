import https from 'node:https';
import { readFileSync } from 'node:fs';
import { generate } from 'selfsigned';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWebhookMetrics } from './metrics';
import type { WebhookServer } from './webhook-server';
import { startWebhookServer } from './webhook-server';
import { DEFAULT_SIDECAR_RESOURCES } from './sidecar-config';

let server: WebhookServer;
let ca: string;
const rejects: string[] = [];

function post(path: string, body: string, method = 'POST'): Promise<{ code: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method,
        ca,
        servername: 'localhost',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, json: JSON.parse(text) as unknown }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  });
  ca = pems.cert;
  server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert: pems.cert,
    key: pems.private,
    sidecar: {
      image: 'sidecar:1',
      resources: DEFAULT_SIDECAR_RESOURCES,
      brokerUrl: 'mqtt://b:1883',
      native: true,
    },
    onReject: (r) => rejects.push(r),
  });
});
afterAll(async () => server.close());

describe('webhook HTTPS server', () => {
  it('answers an AdmissionReview over TLS with a patch', async () => {
    const body = readFileSync(new URL('fixtures/opt-in.json', import.meta.url), 'utf8');
    const r = await post('/mutate', body);
    expect(r.code).toBe(200);
    expect(r.json).toMatchObject({
      kind: 'AdmissionReview',
      response: { uid: 'b1d3a5f0-9c2e-4c6a-8f0e-2f9b7d1e0a01', allowed: true, patchType: 'JSONPatch' },
    });
  });

  it.each([
    { name: 'non-JSON body', body: '{{{', code: 400, error: 'body is not valid JSON' },
    {
      name: 'JSON that is not a review',
      body: '{"kind":"Pod"}',
      code: 400,
      error: 'expected an AdmissionReview object',
    },
  ])('answers a $name with $code and keeps serving', async ({ body, code, error }) => {
    const r = await post('/mutate', body);
    expect(r).toEqual({ code, json: { error } });
    expect(rejects).toContain(error);
    expect((await post('/healthz', '', 'GET')).code).toBe(200);
  });
});

describe('webhook counts', () => {
  it('counts every review by outcome, exposed as optimus_webhook_reviews_total', async () => {
    const registry = new Registry();
    registerWebhookMetrics(registry, () => server.stats);
    const before = { ...server.stats };
    const fixture = JSON.parse(readFileSync(new URL('fixtures/opt-in.json', import.meta.url), 'utf8')) as {
      request: {
        object: { metadata: { labels: Record<string, string>; name?: string; ownerReferences?: unknown } };
      };
    };
    delete fixture.request.object.metadata.labels['optimus.dev/job'];
    delete fixture.request.object.metadata.name; // nor a name or owner to take one from (ADR 0038)
    delete fixture.request.object.metadata.ownerReferences;
    await post('/mutate', JSON.stringify(fixture));
    await post('/mutate', 'not json');
    expect(server.stats.unidentified).toBe(before.unidentified + 1);
    expect(server.stats.refused).toBe(before.refused + 1);
    const text = await registry.metrics();
    expect(text).toContain(
      `optimus_webhook_reviews_total{outcome="unidentified"} ${server.stats.unidentified}`,
    );
  });
});
