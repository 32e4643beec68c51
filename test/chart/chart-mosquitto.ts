/**
 * Debian's Mosquitto running the chart's RENDERED configuration: the mosquitto.conf of the ConfigMap,
 * the init container's script (which creates the dynamic-security file with the controller as admin)
 * and the generated controller Secret. What the chart claims is what this broker enforces.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { brokerConfig, DEBIAN_DYNSEC_PLUGIN, localisePaths, type BrokerConfig } from './broker-config';
import { renderChart } from './render';

export const hasMosquitto =
  spawnSync('mosquitto', ['-h'], { stdio: 'ignore' }).error === undefined &&
  spawnSync('mosquitto_ctrl', ['--help'], { stdio: 'ignore' }).error === undefined &&
  spawnSync('test', ['-e', DEBIAN_DYNSEC_PLUGIN]).status === 0;

export interface ChartMosquitto {
  readonly url: string;
  readonly dir: string;
  readonly config: BrokerConfig;
  /** kill -9: no chance to save anything beyond what it already saved. */
  kill9(): Promise<void>;
  /** Starts it again with the same configuration and data volume (the init container runs again). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolvePort(typeof addr === 'object' && addr !== null ? addr.port : 0));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startChartMosquitto(
  o: { set?: string[]; config?: BrokerConfig } = {},
): Promise<ChartMosquitto> {
  const config = o.config ?? brokerConfig(await renderChart({ set: o.set ?? [] }));
  const dir = mkdtempSync(join(tmpdir(), 'optimus-chart-broker-'));
  for (const d of ['mosquitto/config', 'mosquitto/data', 'credentials/controller'])
    mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'credentials/controller/username'), config.controller.username);
  writeFileSync(join(dir, 'credentials/controller/password'), config.controller.password);
  const port = await freePort();
  let conf = localisePaths(config.conf, dir).replace(/^listener \d+$/m, `listener ${port} 127.0.0.1`);
  // Started as root, Mosquitto would drop to user `mosquitto` and lose access to the 0600 files.
  if (process.getuid?.() === 0) conf += '\nuser root\n';
  const confFile = join(dir, 'mosquitto/config/mosquitto.conf');
  writeFileSync(confFile, conf);
  const url = `mqtt://127.0.0.1:${port}`;
  let proc: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    const init = spawnSync('sh', ['-ec', localisePaths(config.initScript, dir)], { encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`the init container's script failed: ${init.stderr}`);
    proc = spawn('mosquitto', ['-c', confFile], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const probe = await mqtt
        .connectAsync(url, {
          ...config.controller,
          reconnectPeriod: 0,
          connectTimeout: 500,
          clientId: 'chart-probe',
        })
        .catch(() => null);
      if (probe !== null) {
        await probe.endAsync();
        return;
      }
      await sleep(100);
    }
    throw new Error('mosquitto did not start with the rendered configuration');
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
    dir,
    config,
    kill9: () => halt('SIGKILL'),
    restart: launch,
    stop: async () => {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
