/**
 * `optimus local`: the whole system on one machine — embedded broker, emulated servers,
 * emulated MXNet trainers with real sidecars, the controller and its HTTP API.
 * `npm start` runs it with the demo workload.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, loadConfig, readSecretFile } from '../../config/env';
import { WORKLOADS } from '../../local/demo-workload';
import { startLiveView } from '../../local/live-view';
import { watchWrapperParent } from '../../local/parent-watch';
import { finishedRun } from '../../local/previous-run';
import { startLocal } from '../../local/run-local';
import { clearStateDir, lockStateDir } from '../../local/state-lock';
import { summaryLines } from '../../local/summary';
import { ListenError } from '../../http/serve';
import { badFlag, note, numberFlag, printJson, UsageError } from '../output';

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

/** Local mode's defaults where they differ from the controller's (docs/controller-config.md). */
const LOCAL_DEFAULTS = { OPTIMUS_SCHEDULING_INTERVAL_SEC: '120', OPTIMUS_RESTART_COST_SEC: '20' };

/** Signals that end a run gracefully: jobs checkpoint, sidecars drain, the broker stops. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Same rule as OPTIMUS_BROKER_URL, with the error naming the flag. */
function brokerFlag(value: string): string {
  if (!/^(mqtts?|wss?|tcp):\/\/.+/.test(value)) {
    throw badFlag(`--broker must be an mqtt://, mqtts://, ws:// or wss:// URL, got "${value}"`);
  }
  return value;
}

function portFlag(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n > 65_535)
    throw badFlag(`--port must be an integer in [0, 65535] (0 = any free port), got "${value}"`);
  return n;
}

export function registerLocalCommands(program: Command): void {
  program
    .command('local')
    .description('run Optimus locally: embedded broker, emulated servers and MXNet trainers, real sidecars')
    .option('--workload <name>', `workload to submit: ${Object.keys(WORKLOADS).join(', ')}`, 'demo')
    .option('--exit-when-done', 'exit once every job has finished (prints a summary on stdout)')
    .option('--json', 'with --exit-when-done: print the run summary as one JSON document')
    .option('--time-scale <x>', 'job seconds per wall second', numberFlag('time-scale', 0.01, 1000), 20)
    .option(
      '--interval <sec>',
      `scheduling interval in job seconds (default: env OPTIMUS_SCHEDULING_INTERVAL_SEC, else ${LOCAL_DEFAULTS.OPTIMUS_SCHEDULING_INTERVAL_SEC})`,
      numberFlag('interval', 1),
    )
    .option(
      '--restart-cost <sec>',
      `checkpoint → restart cost in job seconds (default: env OPTIMUS_RESTART_COST_SEC, else ${LOCAL_DEFAULTS.OPTIMUS_RESTART_COST_SEC})`,
      numberFlag('restart-cost', 0),
    )
    .option('--policy <name>', 'scheduling policy (default: env OPTIMUS_POLICY, else optimus)')
    .option(
      '--broker <url>',
      'external MQTT broker instead of the embedded one (default: env OPTIMUS_BROKER_URL, else embedded)',
      brokerFlag,
    )
    .option(
      '--port <port>',
      'HTTP API and dashboard port, 0 = any free (default: env OPTIMUS_HTTP_PORT, else 8080)',
      portFlag,
    )
    .option(
      '--host <address>',
      'address the HTTP API listens on; loopback by default, since the API can submit and delete jobs',
      '127.0.0.1',
    )
    .option('--state-dir <dir>', 'where state, logs and job files live', '.optimus/local')
    .option('--fresh', 'discard the state of an earlier run first')
    .action((flags: LocalFlags) => runLocalCommand(flags));
}

async function runLocalCommand(flags: LocalFlags): Promise<void> {
  const workload = Object.hasOwn(WORKLOADS, flags.workload) ? WORKLOADS[flags.workload] : undefined;
  if (!workload)
    throw new UsageError(
      `--workload must be one of ${Object.keys(WORKLOADS).join(', ')}, got "${flags.workload}"`,
    );
  if (flags.json && !flags.exitWhenDone)
    throw new UsageError('--json needs --exit-when-done (the run must end to print a result)');
  let cfg;
  try {
    cfg = loadConfig(
      { ...LOCAL_DEFAULTS, ...process.env },
      {
        ...(flags.interval !== undefined && { schedulingIntervalSec: flags.interval }),
        ...(flags.restartCost !== undefined && { restartCostSec: flags.restartCost }),
        ...(flags.policy !== undefined && { policy: flags.policy }),
        ...(flags.broker !== undefined && { brokerUrl: flags.broker }),
        ...(flags.port !== undefined && { httpPort: flags.port }),
      },
    );
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(err.message);
    throw err;
  }
  // The lock first: a second run on this directory stops here, before it reads or clears anything.
  const lock = lockStateDir(flags.stateDir);
  const previous = flags.fresh ? null : finishedRun(flags.stateDir, workload);
  if (previous)
    note(
      `optimus local: the run in ${flags.stateDir} had finished (${previous.jobs} jobs); starting a new one (--state-dir keeps runs apart)`,
    );
  if (flags.fresh || previous) clearStateDir(flags.stateDir, lock);

  // Signals are caught before anything starts, so even a signal during start-up ends the run cleanly.
  let signalled: string | null = null;
  let onStop: (() => void) | null = null;
  const stopped = new Promise<void>((resolve) => (onStop = resolve));
  const stopOn = (why: string) => {
    if (signalled) return;
    signalled = why;
    note(`\noptimus local: ${why}, shutting down (jobs checkpoint; run again to resume)`);
    onStop?.();
  };
  for (const sig of STOP_SIGNALS) process.once(sig, () => stopOn(sig));
  // A closed terminal or pipe (EPIPE) must stop the run cleanly, not crash it and orphan the tasks.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', () => stopOn(`${stream === process.stdout ? 'stdout' : 'stderr'} closed`));
  const unwatch = watchWrapperParent(() => stopOn('the npm/tsx process that started us exited'));

  let run;
  try {
    run = await startLocal({
      stateDir: flags.stateDir,
      lock,
      workload,
      timeScale: flags.timeScale,
      schedulingIntervalSec: cfg.schedulingIntervalSec,
      restartCostSec: cfg.restartCostSec,
      preRunBudget: cfg.preRunBudget,
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
      allowedHosts: cfg.httpAllowedHosts,
      metricsOpen: cfg.metricsOpen,
      logLevel:
        flags.json || process.stderr.isTTY ? (process.env['OPTIMUS_LOG_LEVEL'] ?? 'warn') : cfg.logLevel,
    });
  } catch (err) {
    unwatch();
    if (err instanceof ListenError)
      throw new Error(`${err.message} (--port or OPTIMUS_HTTP_PORT; 0 picks a free port)`);
    throw err;
  }
  // A signal during start-up resolved `stopped` already: the run stops right after it started.
  const dashboard = `${run.http.url}/dashboard/`;
  // The link carries the run's token (ADR 0031); on a terminal only, so it never lands in a log file.
  note(
    process.stderr.isTTY
      ? `optimus local: dashboard ${run.dashboardUrl}`
      : `optimus local: dashboard ${dashboard} (add #token=<the token in ${join(flags.stateDir, 'api-token')}>)`,
  );
  note(`  API ${run.http.url}/api/v1/jobs · metrics ${run.http.url}/metrics · broker ${run.brokerUrl}`);
  const view = flags.json
    ? null
    : startLiveView(run.controller, process.stderr, { tty: process.stderr.isTTY, dashboard });
  if (flags.exitWhenDone) await Promise.race([run.allDone(), stopped]);
  else {
    void run.allDone().then(() => {
      if (signalled) return;
      view?.stop();
      note(
        [
          'optimus local: all jobs finished; still serving (Ctrl-C to stop)',
          ...summaryLines(run.summary()),
        ].join('\n'),
      );
    });
    await stopped;
  }
  view?.stop();
  unwatch();
  // After stopping: the sidecars deliver the last records of a finished job while they drain, and
  // the accounting (sent vs received) must include them.
  await run.stop();
  const summary = run.summary();
  if (flags.json) {
    const { perTask: _perTask, ...rest } = summary;
    printJson(rest);
  } else if (flags.exitWhenDone) process.stdout.write(`${summaryLines(summary).join('\n')}\n`);
  if (signalled && flags.exitWhenDone) process.exitCode = 130;
}
