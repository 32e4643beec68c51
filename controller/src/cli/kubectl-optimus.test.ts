/**
 * The kubectl plugin shim (`kubectl-optimus`), run by bash with a stand-in `kubectl` on PATH that
 * answers `port-forward` the way kubectl does (a "Forwarding from 127.0.0.1:PORT" line, then it stays)
 * by pointing at a real controller, and `get secret` with the token.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireToken } from '../http/auth';
import { listen, type RunningServer } from '../http/serve';
import { startTestController, type TestController } from './testing/controller-server';

const SHIM = new URL('./kubectl-optimus', import.meta.url).pathname;
const FAKE_KUBECTL = `#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$*" in
  *"get secret"*) printf '%s' s3cret | base64 ;;
  *port-forward*)
    echo $$ > "$FAKE_PID"
    echo "Forwarding from 127.0.0.1:$FAKE_PORT -> 8080"
    echo "Forwarding from [::1]:$FAKE_PORT -> 8080"
    trap 'exit 0' TERM
    while true; do sleep 0.2; done ;;
esac
`;

let t: TestController;
let guarded: RunningServer;
beforeAll(async () => {
  t = await startTestController();
  const app = new Hono();
  app.use('*', requireToken('s3cret'));
  app.all('*', (c) =>
    fetch(`${t.server.url}${c.req.path}`, { headers: { accept: c.req.header('accept') ?? '*/*' } }),
  );
  guarded = await listen(app, 0);
});
afterAll(async () => {
  await guarded.close();
  await t.close();
});

describe('kubectl optimus', () => {
  it('port-forwards the controller Service, reads the token from its Secret, runs the CLI, stops the forward', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-optimus-'));
    writeFileSync(join(dir, 'kubectl'), FAKE_KUBECTL);
    chmodSync(join(dir, 'kubectl'), 0o755);
    const env = {
      ...process.env,
      PATH: `${dir}:${process.env['PATH'] ?? ''}`,
      FAKE_LOG: join(dir, 'log'),
      FAKE_PID: join(dir, 'pid'),
      FAKE_PORT: String(guarded.port),
      OPTIMUS_API_TOKEN_SECRET: '', // the default: the Secret the chart generates
      OPTIMUS_URL: '',
      OPTIMUS_API_TOKEN: '',
    };
    const child = spawn('bash', [SHIM, 'jobs', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect((JSON.parse(out) as { jobs: { id: string }[] }).jobs.map((j) => j.id)).toEqual([
      'default/small',
      'default/big',
    ]);
    expect(readFileSync(join(dir, 'log'), 'utf8').trim().split('\n')).toEqual([
      '-n optimus-system get secret optimus-controller-api-token -o jsonpath={.data.token}',
      '-n optimus-system port-forward service/optimus-controller :8080',
    ]);
    const forward = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    expect(() => process.kill(forward, 0)).toThrow();
  }, 120_000);
});
