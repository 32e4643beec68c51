/**
 * The `helm test` pod: a hook that publishes one synthetic metrics record as a task of the test job and
 * checks through the controller replicas' /metrics that it arrived. Its shell script is run here
 * with stand-ins for nslookup, wget and mosquitto_pub on PATH (busybox-style output), so its logic —
 * summing over replicas, success only on an increase, failure on timeout — is exercised for real.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JOB_PHASES, type JobPhase } from '../../controller/src/runtime/job-record';
import { createMetrics } from '../../controller/src/runtime/metrics';
import { metricsRecordSchema } from '../../shared/src/schemas';
import { parseTopic } from '../../shared/src/topics';
import { ensureHelm } from './helm';
import { NAMESPACE, findObject, renderChart, type K8sObject } from './render';

interface TestContainer {
  command: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
}

let base: K8sObject[];
let pod: K8sObject;
let container: TestContainer;
beforeAll(async () => {
  ensureHelm();
  base = await renderChart();
  pod = findObject(base, 'Pod', '-test-metrics');
  container = (pod['spec'] as { containers: TestContainer[] }).containers[0]!;
});

const envValue = (name: string): string => container.env.find((e) => e.name === name)?.value ?? '';

describe('helm test pod as rendered', () => {
  it('is a test hook, with a headless Service to reach every controller replica', () => {
    expect(pod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const svc = findObject(base, 'Service', '-controller-pods');
    expect(svc.metadata.annotations?.['helm.sh/hook']).toBe('test');
    expect((svc['spec'] as { clusterIP: string }).clusterIP).toBe('None');
    const ctrl = findObject(base, 'Deployment', '-controller');
    const podLabels = (ctrl['spec'] as { template: { metadata: { labels: Record<string, string> } } })
      .template.metadata.labels;
    expect(podLabels).toMatchObject((svc['spec'] as { selector: Record<string, string> }).selector);
  });

  it("publishes as the test job's own task identity (bundled broker, ADR 0013) on a task metrics topic", () => {
    const secretRefs = container.env
      .filter((e) => e.valueFrom && e.name.startsWith('MQTT_'))
      .map((e) => e.valueFrom!.secretKeyRef.name);
    expect(new Set(secretRefs)).toEqual(new Set(['helm-test-optimus-broker']));
    expect(envValue('MQTT_USERNAME')).toBe(`optimus.${NAMESPACE}.helm-test.worker.0`);
    expect(envValue('MQTT_CLIENT_ID')).toBe(envValue('MQTT_USERNAME'));
    expect(parseTopic(envValue('TOPIC'))).toEqual({
      kind: 'metrics',
      task: { namespace: NAMESPACE, job: 'helm-test', role: 'worker', index: 0 },
    });
  });

  it('checks a counter the controller really exports (controller/src/runtime/metrics.ts)', () => {
    const counter = envValue('COUNTER');
    // The test job is no real job: its record is counted as rejected (unknown-job) when it arrives.
    expect(counter).toBe('optimus_messages_rejected_total');
    const phases = Object.fromEntries(JOB_PHASES.map((p) => [p, 0])) as Record<JobPhase, number>;
    const metric = createMetrics(() => phases).registry.getSingleMetric(counter);
    expect(metric?.constructor.name).toBe('Counter');
  });

  it('is not rendered when disabled, nor for a ws:// external broker mosquitto_pub cannot reach', async () => {
    const off = await renderChart({ set: ['tests.enabled=false'] });
    expect(off.filter((o) => o.kind === 'Pod')).toEqual([]);
    const ws = await renderChart({
      set: [
        'broker.external.url=wss://mqtt.example.com/mqtt',
        'broker.external.controllerCredentialsSecret=c',
      ],
    });
    expect(ws.filter((o) => o.kind === 'Pod')).toEqual([]);
  });
});

describe('helm test script, run with stand-in tools', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Two replicas at 10.0.0.1 / 10.0.0.2 with counters 5 and 7; after a publish, the replica named in
   * `receiver` (if any) counts one more. Returns the exit code, output and the published payload.
   */
  async function runScript(
    receiver: string | null,
  ): Promise<{ code: number; out: string; published: string }> {
    dir = mkdtempSync(join(tmpdir(), 'optimus-helm-test-'));
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const tool = (name: string, body: string): void => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    tool(
      'nslookup',
      `printf 'Server:\\t\\t10.96.0.10\\nAddress:\\t10.96.0.10:53\\n\\nName:\\t%s\\nAddress: 10.0.0.1\\n\\nName:\\t%s\\nAddress: 10.0.0.2\\n' "$1" "$1"`,
    );
    tool(
      'mosquitto_pub',
      `while [ $# -gt 0 ]; do case "$1" in -m) shift; printf '%s' "$1" > "${dir}/published";; -L) shift; echo "$1" > "${dir}/url";; esac; shift; done`,
    );
    tool(
      'wget',
      `auth=''
while [ $# -gt 0 ]; do case "$1" in --header) shift; auth="$1" ;; *) url="$1" ;; esac; shift; done
case "$url" in
  */readyz) exit 0 ;;
esac
# Like the controller (ADR 0031): every route but the probes answers 401 without the token.
[ "$auth" = "Authorization: Bearer $API_TOKEN" ] || { echo "wget: server returned error: HTTP/1.1 401 Unauthorized" >&2; exit 1; }
case "$url" in
  */api/v1/jobs/*) echo '{"job":"helm-test"}' ;;
  http://10.0.0.1:*/metrics) n=5 ;;
  http://10.0.0.2:*/metrics) n=7 ;;
  *) exit 1 ;;
esac
[ -n "\${n:-}" ] || exit 0
if [ -f "${dir}/published" ]; then case "$url" in "http://${receiver ?? 'none'}:"*) n=$((n+1)) ;; esac; fi
echo '# HELP optimus_messages_rejected_total Messages rejected'
echo '# TYPE optimus_messages_rejected_total counter'
echo "optimus_messages_rejected_total{reason=\\"unknown-job\\"} $n"
echo 'optimus_messages_rejected_total{reason="schema"} 0'
echo 'optimus_messages_received_total 3'`,
    );
    const env: Record<string, string> = { PATH: `${bin}:${process.env['PATH'] ?? ''}` };
    for (const e of container.env) env[e.name] = e.value ?? `secret-${e.name.toLowerCase()}`;
    env['TIMEOUT'] = '1';
    const script = container.command[container.command.length - 1]!;
    const child = spawn('sh', ['-ec', script], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? 1)));
    let published = '';
    try {
      published = readFileSync(join(dir, 'published'), 'utf8');
    } catch {
      published = '';
    }
    return { code, out, published };
  }

  it("sends the API token from the controller's token Secret (the chart's own by default)", () => {
    const token = container.env.find((e) => e.name === 'API_TOKEN');
    expect(token?.valueFrom?.secretKeyRef).toEqual({ name: 'optimus-controller-api-token', key: 'token' });
    expect(findObject(base, 'Secret', 'optimus-controller-api-token').kind).toBe('Secret');
  });

  it('passes when one replica counts the record, summing over replicas', async () => {
    const r = await runScript('10.0.0.2');
    expect(r.out).toContain('12 -> 13');
    expect(r.code).toBe(0);
  });

  it('publishes a record that matches the wire schema', async () => {
    const r = await runScript('10.0.0.1');
    expect(metricsRecordSchema.safeParse(JSON.parse(r.published)).success).toBe(true);
    expect(readFileSync(join(dir, 'url'), 'utf8').trim()).toBe(
      `${envValue('BROKER_URL')}/${envValue('TOPIC')}`,
    );
  });

  it('fails when no replica counts it before the timeout', async () => {
    const r = await runScript(null);
    expect(r.out).toContain('not received');
    expect(r.code).not.toBe(0);
  });
});
