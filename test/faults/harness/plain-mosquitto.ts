/**
 * Debian's Mosquitto with its defaults (no persistence: a restart loses every session, queue and
 * retained message), on a free port: the external broker of issue 30's outside check, where a
 * `kill -9` at 12 s and 26 s lost 5 records before ADR 0029.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { freePort } from '../../chart/chart-mosquitto';

export interface PlainMosquitto {
  readonly url: string;
  kill9(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPlainMosquitto(): Promise<PlainMosquitto> {
  const dir = mkdtempSync(join(tmpdir(), 'optimus-plain-broker-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\n`);
  const url = `mqtt://127.0.0.1:${port}`;
  let proc: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    proc = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const probe = await mqtt
        .connectAsync(url, { reconnectPeriod: 0, connectTimeout: 500, clientId: 'plain-probe' })
        .catch(() => null);
      if (probe !== null) return void (await probe.endAsync());
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('mosquitto did not start');
  };
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const p = proc;
    proc = null;
    if (p === null || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
  };
  await launch();
  return {
    url,
    kill9: () => halt('SIGKILL'),
    restart: launch,
    stop: async () => {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
