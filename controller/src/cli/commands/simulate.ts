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
import { loadMeasured, workloadSource } from '../../sim/load';
import { productionModels } from '../../sim/models';
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
  restartPause: number;
  minRoundGap?: number;
  measured?: string;
  policyOption: string[];
  workers?: number;
  preRunBudget?: number;
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
      `util ${(f.utilization * 100).toFixed(0)}%${extra(name)}`,
  );
  const failures = Object.entries(doc.failed).map(([name, why]) => `${name.padEnd(30)} FAILED: ${why}\n`);
  const bound =
    `makespan bound (last arrival + shortest possible run): ${(doc.makespanBound / 3600).toFixed(2)} h\n` +
    `avg JCT bound (shortest runs alone; SRPT on each pooled resource): ${doc.jctBound.toFixed(0)} s`;
  return `workload ${doc.workload}, ${doc.seeds} seed(s)\n${lines.join('\n')}\n${failures.join('')}${bound}\n`;
}

async function run(flags: SimulateFlags): Promise<void> {
  const measured = loadMeasured(flags.measured);
  const source = workloadSource(flags.workload, measured, flags.jobs);
  const bar = progressBar(!flags.json && process.stderr.isTTY);
  const policyOptions = parsePolicyOptions(flags.policyOption);
  const estimation = flags.oracle ? ({ kind: 'oracle', error: 0 } as const) : ({ kind: 'online' } as const);
  const options: EvaluationOptions = {
    workload: flags.workload,
    source,
    seeds: flags.seeds,
    measured,
    models: productionModels,
    getPolicy: (name, o) => getPolicy(name, { ...policyOptions, ...o }),
    intervalSec: flags.interval,
    restartPauseSec: flags.restartPause,
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
  bar.stop();
  const doc = flags.ablation
    ? ablationReport({ workload: flags.workload, seeds: flags.seeds, bound, variants, failed }, results)
    : comparisonReport(
        {
          workload: flags.workload,
          seeds: flags.seeds,
          estimation: estimation.kind,
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
  if (flags.json) printJson(doc);
  else process.stdout.write(humanTable(doc));
}

export function registerSimulateCommands(program: Command): void {
  program
    .command('simulate')
    .description('replay a workload on a simulated cluster and compare scheduling policies (paper §6)')
    .option('--workload <name|trace.json>', `${WORKLOAD_NAMES.join(', ')}, or a trace file`, 'paper')
    .option(
      '--policies <list>',
      'comma-separated policies (ratios are against optimus)',
      'optimus,optimus-paper,drf,tetris,fifo,fifo-fill,srtf,srtf-fill',
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
      '--restart-pause <sec>',
      'checkpoint → restart pause per resize, seconds',
      numberFlag('restart-pause', 0),
      30,
    )
    .option(
      '--min-round-gap <sec>',
      'arrivals/finishes trigger a round at most this often (default 0, or 60 s above 500 jobs)',
      numberFlag('min-round-gap', 0),
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
