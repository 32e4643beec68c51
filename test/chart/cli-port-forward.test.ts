/**
 * docs/cli.md, the kubectl-optimus shim and the OpenAPI document's server all name the chart's
 * controller Service as `optimus-controller` in `optimus-system`, port 8080: the rendered chart agrees.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findObject, renderChart } from './render';

const REPO = new URL('../..', import.meta.url).pathname;

describe('the CLI’s way into a cluster', () => {
  it('port-forwards a Service the chart renders, on the port it names', async () => {
    const svc = findObject(await renderChart(), 'Service', 'optimus-controller') as unknown as {
      metadata: { name: string; namespace: string };
      spec: { ports: { name: string; port: number }[] };
    };
    expect(svc.metadata).toMatchObject({ name: 'optimus-controller', namespace: 'optimus-system' });
    expect(svc.spec.ports).toContainEqual(expect.objectContaining({ name: 'http', port: 8080 }));
    expect(findObject(await renderChart(), 'Secret', 'optimus-controller-api-token').kind).toBe('Secret');
    const doc = readFileSync(`${REPO}docs/cli.md`, 'utf8');
    expect(doc).toContain('get secret optimus-controller-api-token');
    expect(doc).toContain('kubectl -n optimus-system port-forward service/optimus-controller 8080:8080');
    const shim = readFileSync(`${REPO}controller/src/cli/kubectl-optimus`, 'utf8');
    for (const d of [
      'OPTIMUS_NAMESPACE:-optimus-system',
      'OPTIMUS_SERVICE:-optimus-controller',
      'OPTIMUS_SERVICE_PORT:-8080',
      'OPTIMUS_API_TOKEN_SECRET:-$svc-api-token',
    ])
      expect(shim).toContain(d);
    const api = JSON.parse(readFileSync(`${REPO}docs/api/openapi.json`, 'utf8')) as {
      servers: { description: string }[];
    };
    expect(api.servers[0]?.description).toContain(
      'kubectl -n optimus-system port-forward service/optimus-controller 8080:8080',
    );
  });
});
