/**
 * `optimus kubernetes run` where no API server answers — the controller image's bundle, as a real
 * process: one clear line (server, reason, where the configuration came from), no stack trace,
 * retries with backoff, and it proceeds once the API server comes up; SIGTERM while waiting exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONTROLLER_BUNDLE, buildController } from '../../controller/build.mjs';
import type { ApiDouble } from '../k8s-api-double/server';
import { startApiDouble } from '../k8s-api-double/server';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

let dir = '';
let double: ApiDouble | undefined;
beforeAll(async () => {
  await buildController();
}, 120_000);
afterEach(async () => {
  await double?.close();
  double = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function start(server: string) {
  dir = mkdtempSync(join(tmpdir(), 'optimus-kubeconfig-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: '${server}', insecure-skip-tls-verify: true}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [CONTROLLER_BUNDLE, 'kubernetes', 'run', '--leader-election=false'], {
    env: {
      PATH: process.env['PATH'] ?? '',
      KUBECONFIG: kubeconfig,
      HOME: dir,
      OPTIMUS_BROKER_URL: 'mqtt://127.0.0.1:1',
      OPTIMUS_HTTP_PORT: '0',
      // These tests are about scheduling, not the API's token (test/k8s/api-token.test.ts is).
      OPTIMUS_API_INSECURE_NO_TOKEN: 'true',
      OPTIMUS_LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

describe('kubernetes run without a reachable API server', () => {
  it('says so in one line, retries with backoff, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const run = start(`https://127.0.0.1:${port}`);
    await expect.poll(() => run.stderr(), { timeout: 10_000 }).toContain('cannot reach');
    await new Promise((r) => setTimeout(r, 3500)); // more attempts, at ~1 s and ~3 s after the first
    const lines = run.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `cannot reach the Kubernetes API server https://127.0.0.1:${port} \\(.*ECONNREFUSED.*config: KUBECONFIG=`,
      ),
    );
    expect(run.stderr()).not.toMatch(/\n\s+at /);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 20_000);

  it('carries on once the API server answers', async () => {
    const port = await freePort();
    const run = start(`http://127.0.0.1:${port}`);
    await expect.poll(() => run.stderr(), { timeout: 10_000 }).toContain('cannot reach');
    double = await startApiDouble({ port });
    await expect
      .poll(() => run.stderr(), { timeout: 8000 })
      .toMatch(/reached the API server .* \(v1\.30\.0\)/);
    run.child.kill('SIGKILL');
    await run.exited;
  }, 20_000);
});
