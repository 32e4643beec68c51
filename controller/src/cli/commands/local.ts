/**
 * `optimus local`: the whole system on one machine — embedded broker, emulated servers,
 * emulated MXNet trainers with real sidecars, the controller and its HTTP API.
 * `npm start` runs it with the demo workload.
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, loadConfig, readSecretFile } from '../../config/env';
import { DEFAULT_TIME_SCALE, WORKLOADS } from '../../local/demo-workload';
import { startLiveView } from '../../local/live-view';
import { finishedRun } from '../../local/previous-run';
import { logFileOf, startLocal, STOP_DEADLINE_MS } from '../../local/run-local';
import { clearStateDir, lockStateDir } from '../../local/state-lock';
import { stoppedLine, supervise } from '../../local/supervise';
import { summaryLines } from '../../local/summary';
import { ListenError } from '../../http/serve';
import { badFlag, numberFlag, printJson, UsageError } from '../output';

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

/** A line on stderr that cannot throw: a closed terminal (EIO) or pipe must not crash the stop. */
function note(line: string): void {
  try {
    process.stderr.write(`${line}\n`);
  } catch {
    // nobody is reading any more; the log file has the story
  }
}

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
    .option(
      '--time-scale <x>',
      'job seconds per wall second (the demo takes about four minutes at the default)',
      numberFlag('time-scale', 0.01, 1000),
      DEFAULT_TIME_SCALE,
    )
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
  const logFile = logFileOf(flags.stateDir);
  const previous = flags.fresh ? null : finishedRun(flags.stateDir, workload);
  if (previous)
    note(
      `optimus local: the run in ${flags.stateDir} had finished (${previous.jobs} jobs); starting a new one (--state-dir keeps runs apart)`,
    );
  if (flags.fresh || previous) clearStateDir(flags.stateDir, lock);

  // Every ending is handled before anything starts, so even a signal during start-up ends the run cleanly.
  const sup = supervise({
    stateDir: flags.stateDir,
    note,
    deadlineMs: STOP_DEADLINE_MS,
    logCrash: (err) => {
      try {
        const stack = err instanceof Error ? (err.stack ?? err.message) : String(err);
        appendFileSync(
          logFile,
          `${JSON.stringify({ level: 60, time: Date.now(), msg: 'crashed', stack })}\n`,
        );
      } catch {
        // the directory may be gone; the line on stderr still says what happened
      }
    },
  });

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
      logLevel: cfg.logLevel,
      logFile,
      stopDeadlineMs: STOP_DEADLINE_MS,
      // The first line as soon as the port is bound. The link carries the run's token (ADR 0031),
      // on a terminal only, so it never lands in a log file.
      onListening: (at) =>
        note(
          process.stderr.isTTY
            ? `optimus local: dashboard ${at.dashboardUrl} (starting the broker and the jobs…)`
            : `optimus local: dashboard ${at.url}/dashboard/ (add #token=<the token in ${shown(at.tokenFile)}>; starting the broker and the jobs…)`,
        ),
    });
  } catch (err) {
    if (err instanceof ListenError)
      throw new Error(`${err.message} (--port or OPTIMUS_HTTP_PORT; 0 picks a free port)`);
    throw err;
  }
  // A stop asked for during start-up resolved `requested` already: the run stops right after it started.
  const dashboard = `${run.http.url}/dashboard/`;
  note(
    `  API ${run.http.url}/api/v1/jobs · metrics ${run.http.url}/metrics · broker ${run.brokerUrl} · log ${shown(logFile)}`,
  );
  const view = flags.json
    ? null
    : startLiveView(run.controller, process.stderr, { tty: process.stderr.isTTY, dashboard });
  if (view) sup.beforeEnd(() => view.stop());
  const stopped = sup.requested;
  if (flags.exitWhenDone) await Promise.race([run.allDone(), stopped]);
  else {
    void run.allDone().then(() => {
      if (sup.reason !== null) return;
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
  // After stopping: the sidecars deliver the last records of a finished job while they drain, and
  // the accounting (sent vs received) must include them.
  const report = await run.stop();
  note(stoppedLine(report));
  const summary = run.summary();
  if (flags.json) {
    const { perTask: _perTask, ...rest } = summary;
    printJson(rest);
  } else if (flags.exitWhenDone) process.stdout.write(`${summaryLines(summary).join('\n')}\n`);
  sup.exit(sup.reason !== null && flags.exitWhenDone ? 130 : 0);
}

/** A path as short as it reads: relative to the working directory when inside it. */
function shown(path: string): string {
  const r = relative(process.cwd(), path);
  return r.startsWith('..') ? path : r;
}
