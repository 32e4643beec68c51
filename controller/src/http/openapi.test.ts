import { Validator } from '@seriousme/openapi-schema-validator';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../runtime/events';
import { History } from '../dashboard/history';
import { createApp } from './app';

const runtime = {
  ready: true,
  metrics: { registry: new Registry() },
  events: new EventHub(),
  list: () => [],
  get: () => ({}),
  submit: async () => ({}),
  remove: async () => {},
  whatIf: () => ({}),
};
const source = {
  ...runtime,
  clock: { now: () => 0, wallMs: () => 0, scale: 1 },
  records: () => [],
  convergenceData: () => ({ lossPoints: [], estimate: null }),
  servers: async () => [],
};

describe('OpenAPI document', () => {
  const app = createApp({ runtime, dashboard: { source, history: new History() } });

  it('is served and valid OpenAPI 3.1 (checked against the specification’s JSON Schema)', async () => {
    const res = await app.request('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every API route the app serves, and nothing it does not', async () => {
    const doc = (await (await app.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const served = app.routes
      .filter((r) => r.method !== 'ALL' && !r.path.startsWith('/dashboard') && r.path !== '/')
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect([...new Set(served)].sort()).toEqual([...new Set(documented)].sort());
  });

  it('describes the job body with its defaults and the 422 of a job that can never fit', async () => {
    const doc = (await (await app.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, { post?: { responses: Record<string, unknown> } }>;
      components: {
        schemas: Record<string, { properties: Record<string, { default?: unknown }>; required: string[] }>;
      };
    };
    const spec = doc.components.schemas['JobSpec']!;
    expect(spec.required.sort()).toEqual(['batchSize', 'name', 'psDemand', 'stepsPerEpoch', 'workerDemand']);
    expect(spec.properties['maxEpochs']?.default).toBe(50);
    expect(Object.keys(doc.paths['/api/v1/jobs']!.post!.responses)).toContain('422');
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Job', 'WhatIf', 'Event_decision', 'Event_job', 'Event_progress']),
    );
  });
});
