/**
 * `optimus simulate`: replays a workload on the simulated cluster with every policy (paper §6), or the
 * ablation of Fig. 15 with `--ablation`. With `--json`, one JSON document on stdout and nothing else.
 */
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { parsePolicyOptions, policyOptionKeys } from '../../scheduling/policy-options';
import { getPolicy, policyNames } from '../../scheduling/registry';
import { ABLATION_VARIANTS, ablationReport, type AblationReport } from '../../sim/ablation';
import {
  comparisonReport,
  runEvaluation,
  type ComparisonReport,
  type EvaluationOptions,
  type Variant,
} from '../../sim/evaluate';
import { loadMeasured, loadMeasuredPause, workloadSource } from '../../sim/load';
import { runSensitivity, type SensitivityReport } from '../../sim/sensitivity';
import { productionModels } from '../../sim/models';
import { isMeasuredPause } from '../../sim/restart-cost';
import { writePlots } from '../../sim/plots';
import { WORKLOAD_NAMES } from '../../sim/workloads';
import { PRE_RUN_DEFAULTS } from '../../runtime/pre-run';
import { intFlag, note, numberFlag, printJson, UsageError } from '../output';

interface SimulateFlags {
  workload: string;
  policies: string;
  seeds: number;
  json?: boolean;
  oracle?: boolean;
  ablation?: boolean;
  plots?: string;
  png?: boolean;
  jobs?: number;
  interval: number;
  /** Seconds, or `measured[:kind]` (see {@link restartPauseFlag}). */
  restartPause: number | string;
  minRoundGap?: number;
  measured?: string;
  policyOption: string[];
  workers?: number;
  preRunBudget?: number;
  speedNoise?: number;
  declaredEpochs?: boolean;
  sensitivity?: boolean;
}

function parsePolicies(list: string): string[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const known = new Set(policyNames());
  const bad = names.filter((n) => !known.has(n));
  if (bad.length > 0)
    throw new UsageError(`--policies: unknown policy "${bad.join(', ')}"; known: ${[...known].join(', ')}`);
  if (names.length === 0) throw new UsageError('--policies must name at least one policy');
  // Ratios are against Optimus, so it always runs.
  return names.includes('optimus') ? names : ['optimus', ...names];
}

/** `--restart-pause`: seconds ≥ 0, or `measured` / `measured:<kind>` (test/data/restart-cost.json). */
function restartPauseFlag(value: string): number | string {
  return isMeasuredPause(value) ? value : numberFlag('restart-pause', 0)(value);
}

function restartPauseSec(flag: number | string): number {
  if (typeof flag === 'number') return flag;
  let sec: number;
  try {
    sec = loadMeasuredPause(flag);
  } catch (err) {
    // The file or the kind the flag names: a usage error, its message names the flag.
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  note(`restart pause (${flag}, measured on the real PyTorch trainers): ${sec.toFixed(2)} s`);
  return sec;
}

function progressBar(enabled: boolean): { onRun: (done: number, total: number) => void; stop: () => void } {
  if (!enabled) return { onRun: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: 'simulating [{bar}] {percentage}% of {total} runs | {duration_formatted}',
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    onRun: (done, total) => {
      if (!started) bar.start(total, 0);
      started = true;
      bar.update(Math.round(done * 100) / 100);
    },
    stop: () => started && bar.stop(),
  };
}

/** A readable table: one line per policy/variant, figures in seconds. */
function humanTable(doc: ComparisonReport | AblationReport): string {
  const rows = 'policies' in doc ? doc.policies : doc.variants;
  // Optimus's own range is 1–1, and one seed has no spread.
  const spread = (name: string, range: { min: number; max: number } | undefined): string =>
    range && doc.seeds > 1 && name !== 'optimus'
      ? ` (seeds ${range.min.toFixed(2)}–${range.max.toFixed(2)})`
      : '';
  const extra = (name: string): string => {
    if ('ratios' in doc) {
      const r = doc.ratios[name];
      const won = doc.seedsBetterThanOptimus[name] ?? 0;
      return r
        ? `  JCT ×${r.jct.toFixed(2)}${spread(name, doc.jctRatioRange[name])}  makespan ×${r.makespan.toFixed(2)} of optimus${won > 0 ? `  (better on ${won}/${doc.seeds} seeds)` : ''}`
        : '';
    }
    const v = doc.variants[name];
    return v
      ? `  ×${v.jctVsOptimus.toFixed(2)}${spread(name, v.jctVsOptimusRange)} of optimus (better on ${v.seedsBetterThanOptimus}/${doc.seeds} seeds)  DRF ÷ this ${v.jctVsDrf.toFixed(2)}`
      : '';
  };
  const lines = Object.entries(rows).map(
    ([name, f]) =>
      `${name.padEnd(30)} avg JCT ${f.avgJct.toFixed(0).padStart(6)} s  p95 ${f.p95Jct.toFixed(0).padStart(6)} s  ` +
      `makespan ${(f.makespan / 3600).toFixed(2)} h  restarts ${f.restarts.toFixed(0).padStart(4)}  ` +
      `util ${(f.utilization * 100).toFixed(0)}% (GPUs ${(f.gpuUtilization * 100).toFixed(0)}%)  ` +
      `late starts ${f.lateStarts.toFixed(1)}${extra(name)}`,
  );
  const failures = Object.entries(doc.failed).map(([name, why]) => `${name.padEnd(30)} FAILED: ${why}\n`);
  const bound =
    `makespan bound (last arrival + shortest possible run): ${(doc.makespanBound / 3600).toFixed(2)} h\n` +
    `avg JCT bound (shortest runs alone; SRPT on each pooled resource): ${doc.jctBound.toFixed(0)} s`;
  return `workload ${doc.workload}, ${doc.seeds} seed(s)\n${lines.join('\n')}\n${failures.join('')}${bound}\n`;
}

/** Every JCT ratio at each sensitivity setting, one column per setting, the run's own first. */
function sensitivityTable(s: SensitivityReport, seeds: number): string {
  const label = (r: SensitivityReport['rows'][number]) =>
    r.varies === 'default'
      ? `default (${r.restartPauseSec} s, ${r.speedNoise * 100}%)`
      : r.varies === 'restartPauseSec'
        ? `pause ${r.restartPauseSec} s`
        : `noise ${r.speedNoise * 100}%`;
  const names = Object.keys(s.rows[0]?.jct ?? {});
  const cell = (r: SensitivityReport['rows'][number], name: string) => {
    const v = r.jct[name];
    const range = r.jctRatioRange[name];
    if (v === undefined) return r.failed[name] ? 'failed' : '–';
    return seeds > 1 && range && name !== 'optimus'
      ? `${v.toFixed(2)} (${range.min.toFixed(2)}–${range.max.toFixed(2)})`
      : v.toFixed(2);
  };
  const width = 22;
  const head = ['JCT ÷ optimus'.padEnd(30), ...s.rows.map((r) => label(r).padStart(width))].join('');
  const lines = names.map((n) => [n.padEnd(30), ...s.rows.map((r) => cell(r, n).padStart(width))].join(''));
  const optimus = [
    'optimus avg JCT (s)'.padEnd(30),
    ...s.rows.map((r) => (r.avgJct['optimus'] ?? NaN).toFixed(0).padStart(width)),
  ].join('');
  return `\nsensitivity: restart pause and logged-speed noise (per-seed range in brackets)\n${head}\n${lines.join('\n')}\n${optimus}\n`;
}

async function run(flags: SimulateFlags): Promise<void> {
  const measured = loadMeasured(flags.measured);
  const source = workloadSource(flags.workload, measured, flags.jobs);
  const bar = progressBar(!flags.json && process.stderr.isTTY);
  const policyOptions = parsePolicyOptions(flags.policyOption);
  if (flags.oracle && flags.declaredEpochs)
    throw new UsageError('--oracle and --declared-epochs exclude each other');
  if (flags.ablation && flags.sensitivity)
    throw new UsageError('--ablation and --sensitivity exclude each other');
  const estimation = flags.oracle
    ? ({ kind: 'oracle', error: 0 } as const)
    : ({ kind: 'online', ...(flags.declaredEpochs ? { declaredEpochs: true } : {}) } as const);
  const estimationName = flags.oracle ? 'oracle' : flags.declaredEpochs ? 'declared-epochs' : 'online';
  const options: EvaluationOptions = {
    workload: flags.workload,
    source,
    seeds: flags.seeds,
    measured,
    models: productionModels,
    getPolicy: (name, o) => getPolicy(name, { ...policyOptions, ...o }),
    intervalSec: flags.interval,
    restartPauseSec: restartPauseSec(flags.restartPause),
    ...(flags.speedNoise === undefined ? {} : { speedNoise: flags.speedNoise }),
    ...(flags.minRoundGap === undefined ? {} : { minRoundGapSec: flags.minRoundGap }),
    onRun: bar.onRun,
    policyOptions,
    ...(flags.measured === undefined ? {} : { measuredPath: flags.measured }),
    ...(flags.workers === undefined ? {} : { workers: flags.workers }),
    ...(flags.preRunBudget === undefined ? {} : { preRunBudget: flags.preRunBudget }),
  };
  const variants: Variant[] = flags.ablation
    ? [...ABLATION_VARIANTS]
    : parsePolicies(flags.policies).map((p) => ({ name: p, policy: p, estimation }));
  const watchJob = source(1).jobs[Math.floor(source(1).jobs.length / 2)]?.id;
  const { results, bound, failed } = await runEvaluation(options, variants, watchJob ? { watchJob } : {});
  const sensitivity = flags.sensitivity ? await runSensitivity(options, variants, { results, failed }) : null;
  bar.stop();
  const doc = flags.ablation
    ? ablationReport({ workload: flags.workload, seeds: flags.seeds, bound, variants, failed }, results)
    : comparisonReport(
        {
          workload: flags.workload,
          seeds: flags.seeds,
          estimation: estimationName,
          policyOptions: flags.policyOption,
          bound,
          failed,
        },
        results,
      );
  if (flags.plots) {
    const files = await writePlots({
      dir: flags.plots,
      results,
      trace: source(1),
      watchJob,
      png: flags.png ?? false,
    });
    note(`plots: ${files.join(', ')}`);
  }
  if (flags.json) printJson(sensitivity ? { ...doc, sensitivity } : doc);
  else process.stdout.write(humanTable(doc) + (sensitivity ? sensitivityTable(sensitivity, doc.seeds) : ''));
}

export function registerSimulateCommands(program: Command): void {
  program
    .command('simulate')
    .description('replay a workload on a simulated cluster and compare scheduling policies (paper §6)')
    .option('--workload <name|trace.json>', `${WORKLOAD_NAMES.join(', ')}, or a trace file`, 'paper')
    .option(
      '--policies <list>',
      'comma-separated policies (ratios are against optimus)',
      'optimus,optimus-paper,drf,tetris,tiresias,fifo,fifo-fill,srtf,srtf-fill',
    )
    .option('--seeds <n>', 'number of seeds (1..n); figures are averaged', intFlag('seeds'), 1)
    .option('--oracle', 'give the policies the true remaining work and speeds instead of online estimates')
    .option(
      '--ablation',
      'each of our rules off alone, optimus-paper and its two hybrids, allocation/placement only, estimation errors (paper Fig. 15)',
    )
    .option(
      '--policy-option <key=value>',
      `an option for every policy (repeatable; each reads the keys it knows): ${policyOptionKeys().join(', ')}`,
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--plots <dir>', 'write SVG plots (JCT CDF, running tasks, utilisation, one loss curve) to <dir>')
    .option('--png', 'with --plots, also write PNG files')
    .option('--jobs <n>', 'number of jobs of a built-in workload', intFlag('jobs'))
    .option('--interval <sec>', 'scheduling interval in seconds', numberFlag('interval', 1), 600)
    .option(
      '--restart-pause <sec|measured[:kind]>',
      'checkpoint → restart pause per resize, seconds; measured: the median restart of the real PyTorch trainers (npm run bench:restart) of the parameter-server kinds, or of one kind (allreduce, ps-sync, ps-async)',
      restartPauseFlag,
      30,
    )
    .option(
      '--min-round-gap <sec>',
      'arrivals/finishes trigger a round at most this often (default 0, or 60 s above 500 jobs)',
      numberFlag('min-round-gap', 0),
    )
    .option(
      '--speed-noise <f>',
      'relative noise of each logged speed (default 0.05)',
      numberFlag('speed-noise', 0, 0.5),
    )
    .option(
      '--declared-epochs',
      'jobs of fixed work (DL2 traces) declare their epochs: remaining work is known, speeds are estimated online',
    )
    .option(
      '--sensitivity',
      'also every ratio at restart pauses of 0, 30 and 120 s and at speed noise of 5% and 20% (JSON: "sensitivity")',
    )
    .option('--measured <csv>', 'measured-speeds CSV (default test/data/measured-speeds.csv)')
    .option(
      '--pre-run-budget <n>',
      `sample shapes of each new job's pre-run (0: none; default: the runtime's, ${PRE_RUN_DEFAULTS.budget})`,
      intFlag('pre-run-budget', 0),
    )
    .option(
      '--workers <n>',
      'worker threads for the runs (default: one per core; 1 runs them one after another)',
      intFlag('workers'),
    )
    .option('--json', 'print one JSON document on stdout')
    .action(async (flags: SimulateFlags) => run(flags));
}
