/**
 * `optimus local`: the whole system on one machine — embedded broker, emulated servers,
 * emulated MXNet trainers with real sidecars, the controller and its HTTP API.
 * `npm start` runs it with the demo workload.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig, readSecretFile } from '../../config/env';
import { WORKLOADS } from '../../local/demo-workload';
import { startLocal } from '../../local/run-local';
import { startLiveView } from '../../local/live-view';
import { intFlag, note, numberFlag, printJson } from '../output';

interface LocalFlags {
  workload: string;
  exitWhenDone?: boolean;
  json?: boolean;
  timeScale: number;
  interval?: number;
  restartCost?: number;
  policy?: string;
  broker?: string;
  port?: number;
  host: string;
  stateDir: string;
  fresh?: boolean;
}

/** Same rule as OPTIMUS_BROKER_URL, with the error naming the flag. */
function brokerFlag(value: string): string {
  if (!/^(mqtts?|wss?|tcp):\/\/.+/.test(value)) {
    throw new Error(`--broker must be an mqtt://, mqtts://, ws:// or wss:// URL, got "${value}"`);
  }
  return value;
}

export function registerLocalCommands(program: Command): void {
  program
    .command('local')
    .description('run Optimus locally: embedded broker, emulated servers and MXNet trainers, real sidecars')
    .option(
      '--workload <name>',
      'workload to submit: demo (5 jobs), small (3 jobs) or none (jobs come over the API)',
      'demo',
    )
    .option('--exit-when-done', 'exit once every job has finished')
    .option('--json', 'with --exit-when-done: print the run summary as one JSON document')
    .option('--time-scale <x>', 'job seconds per wall second', numberFlag('time-scale', 0.01, 1000), 20)
    .option(
      '--interval <sec>',
      'scheduling interval in job seconds (env OPTIMUS_SCHEDULING_INTERVAL_SEC)',
      numberFlag('interval', 1),
    )
    .option(
      '--restart-cost <sec>',
      'checkpoint → restart cost in job seconds (env OPTIMUS_RESTART_COST_SEC)',
      numberFlag('restart-cost', 0),
    )
    .option('--policy <name>', 'scheduling policy (env OPTIMUS_POLICY)')
    .option(
      '--broker <url>',
      'external MQTT broker instead of the embedded one (env OPTIMUS_BROKER_URL)',
      brokerFlag,
    )
    .option('--port <port>', 'HTTP API port, 0 = any free (env OPTIMUS_HTTP_PORT)', intFlag('port', 0))
    .option(
      '--host <address>',
      'address the HTTP API listens on; loopback by default, since the API can submit and delete jobs',
      '127.0.0.1',
    )
    .option('--state-dir <dir>', 'where state, logs and job files live', '.optimus/local')
    .option('--fresh', 'discard the state of an earlier run first')
    .action(async (flags: LocalFlags) => {
      const workload = Object.hasOwn(WORKLOADS, flags.workload) ? WORKLOADS[flags.workload] : undefined;
      if (!workload)
        throw new Error(
          `--workload must be one of ${Object.keys(WORKLOADS).join(', ')}, got "${flags.workload}"`,
        );
      if (flags.json && !flags.exitWhenDone)
        throw new Error('--json needs --exit-when-done (the run must end to print a result)');
      const env = { OPTIMUS_SCHEDULING_INTERVAL_SEC: '120', OPTIMUS_RESTART_COST_SEC: '20', ...process.env };
      let cfg;
      try {
        cfg = loadConfig(env, {
          ...(flags.interval !== undefined && { schedulingIntervalSec: flags.interval }),
          ...(flags.restartCost !== undefined && { restartCostSec: flags.restartCost }),
          ...(flags.policy !== undefined && { policy: flags.policy }),
          ...(flags.broker !== undefined && { brokerUrl: flags.broker }),
          ...(flags.port !== undefined && { httpPort: flags.port }),
        });
      } catch (err) {
        if (err instanceof ConfigError) throw new Error(err.message);
        throw err;
      }
      if (flags.fresh) {
        const { rmSync } = await import('node:fs');
        rmSync(flags.stateDir, { recursive: true, force: true });
      }
      const run = await startLocal({
        stateDir: flags.stateDir,
        workload,
        timeScale: flags.timeScale,
        schedulingIntervalSec: cfg.schedulingIntervalSec,
        restartCostSec: cfg.restartCostSec,
        policy: cfg.policy,
        brokerUrl: cfg.brokerUrl,
        brokerUsername: cfg.brokerUsername,
        brokerPassword: cfg.brokerPasswordFile
          ? readSecretFile(cfg.brokerPasswordFile, 'OPTIMUS_BROKER_PASSWORD_FILE')
          : undefined,
        brokerIdentities: cfg.brokerIdentities,
        httpPort: cfg.httpPort,
        httpHost: flags.host,
        token: cfg.apiTokenFile ? readSecretFile(cfg.apiTokenFile, 'OPTIMUS_API_TOKEN_FILE') : undefined,
        logLevel:
          flags.json || process.stderr.isTTY ? (process.env['OPTIMUS_LOG_LEVEL'] ?? 'warn') : cfg.logLevel,
      });
      note(
        `optimus local: API at ${run.http.url} (jobs: ${run.http.url}/api/v1/jobs, metrics: ${run.http.url}/metrics), broker ${run.brokerUrl}`,
      );
      const view = !flags.json && process.stderr.isTTY ? startLiveView(run.controller, process.stderr) : null;
      let signalled = false;
      const stopped = new Promise<void>((resolve) => {
        const onSignal = (sig: string) => {
          if (signalled) return;
          signalled = true;
          note(`\noptimus local: ${sig}, shutting down (jobs checkpoint; run again to resume)`);
          resolve();
        };
        process.once('SIGINT', () => onSignal('SIGINT'));
        process.once('SIGTERM', () => onSignal('SIGTERM'));
      });
      if (flags.exitWhenDone) await Promise.race([run.allDone(), stopped]);
      else {
        void run
          .allDone()
          .then(() => note('optimus local: all jobs finished; still serving (Ctrl-C to stop)'));
        await stopped;
      }
      view?.stop();
      // After stopping: the sidecars deliver the last records of a finished job while they drain, and
      // the accounting (sent vs received) must include them.
      await run.stop();
      const summary = run.summary();
      if (flags.json) {
        const { perTask: _perTask, ...rest } = summary;
        printJson(rest);
      } else if (flags.exitWhenDone) note(JSON.stringify(summary.jobs));
      if (signalled && flags.exitWhenDone) process.exitCode = 130;
    });
}
