/**
 * `optimus eval speed`: accuracy of the speed model on measured (or synthetic) speeds, against the
 * paper's Eq. 3/4 fitted on the same samples. All-reduce data (a directory of Pollux-format
 * `<model>/placements.csv`) scores the all-reduce model against Pollux's throughput model instead
 * (eval-speed-allreduce.ts). Composition only: parsing and the protocol are pure.
 */
import type { Command } from 'commander';
import { loadMeasuredSpeeds } from '../measured-data-file';
import { isAllReduceData } from '../pollux-data-file';
import { runAllReduceEval } from './eval-speed-allreduce';
import { evaluateSpeedModels, type SpeedEvalResult } from '../../models/speed/speed-eval';
import { leaveModelsOut, type LeaveModelsOutResult } from '../../models/speed/leave-models-out';
import { syntheticSpeedData } from '../../models/speed/synthetic';
import { intFlag, note, numberFlag, printJson, UsageError } from '../output';

interface EvalSpeedFlags {
  readonly data?: string;
  readonly synthetic?: boolean;
  readonly noise: number;
  readonly samples: number;
  readonly seeds: number;
  readonly choose?: boolean;
  readonly leaveModelsOut?: boolean;
  readonly json?: boolean;
}

const flagName = (key: string): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

function printHeldOut(r: LeaveModelsOutResult, plain: SpeedEvalResult): void {
  const lines = [
    '',
    `leave-models-out: each model scored with the residual-kernel setting the OTHER models chose (${r.grid.length} settings)`,
    `${'model'.padEnd(26)}${'median'.padStart(9)}${'p90'.padStart(9)}${'default'.padStart(10)}  chosen`,
    ...Object.entries(r.models).map(
      ([name, m]) =>
        `${name.padEnd(26)}${pct(m.medianError).padStart(9)}${pct(m.p90Error).padStart(9)}${pct(plain.models[name]?.medianError ?? NaN).padStart(10)}  ${m.chosen}`,
    ),
    `${'ALL'.padEnd(26)}${pct(r.medianError).padStart(9)}${pct(r.p90Error).padStart(9)}${pct(plain.medianError).padStart(10)}  (paper Eq. 3/4: ${pct(r.baseline.medianError)} / ${pct(r.baseline.p90Error)})`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function printTable(r: SpeedEvalResult): void {
  const lines = [
    `speed model accuracy: ${r.samples} shapes per fit, seeds 1..${r.seeds} (relative error of steps/s at unseen shapes)`,
    `${'model'.padEnd(26)}${'median'.padStart(9)}${'p90'.padStart(9)}${'paper med'.padStart(11)}${'paper p90'.padStart(11)}`,
    ...Object.entries(r.models).map(
      ([name, m]) =>
        `${name.padEnd(26)}${pct(m.medianError).padStart(9)}${pct(m.p90Error).padStart(9)}${pct(m.baseline.medianError).padStart(11)}${pct(m.baseline.p90Error).padStart(11)}`,
    ),
    `${'ALL'.padEnd(26)}${pct(r.medianError).padStart(9)}${pct(r.p90Error).padStart(9)}${pct(r.baseline.medianError).padStart(11)}${pct(r.baseline.p90Error).padStart(11)}`,
    `90% interval coverage: ${pct(r.intervalCoverage)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function registerEvalSpeed(program: Command): void {
  program
    .command('speed')
    .description(
      "score the speed model on measured speeds: parameter-server data against the paper Eq. 3/4; all-reduce data against Pollux's throughput model",
    )
    .option(
      '--data <csv|dir>',
      "measured speeds: a CSV with the columns of test/data/measured-speeds.csv (parameter-server jobs), or all-reduce jobs in Pollux's format: a directory of <model>/placements.csv such as test/data/pollux (or one placements.csv)",
    )
    .option('--synthetic', 'use synthetic jobs with known speed laws instead of --data')
    .option('--noise <sigma>', 'log-normal noise of synthetic measurements', numberFlag('noise', 0, 1), 0.04)
    .requiredOption('--samples <k>', 'shapes (all-reduce: configurations) each fit sees', intFlag('samples'))
    .option('--seeds <s>', 'seeds 1..s', intFlag('seeds'), 20)
    .option('--choose', 'let the shape chooser pick the k shapes instead of a random draw')
    .option(
      '--leave-models-out',
      'also: tune the residual kernel on the other models of the data, score each model held out',
    )
    .option('--json', 'print one JSON document')
    .action(async (flags: EvalSpeedFlags) => {
      if (!flags.data && !flags.synthetic)
        throw new UsageError('--data <csv|dir> is required (or --synthetic)');
      if (flags.data && (await isAllReduceData(flags.data))) {
        const psOnly = ['synthetic', 'choose', 'leaveModelsOut'] as const;
        const given = psOnly.filter((f) => flags[f]);
        if (given.length > 0)
          throw new UsageError(
            `${given.map(flagName).join(', ')}: parameter-server data only, not all-reduce data`,
          );
        return runAllReduceEval(flags.data, flags);
      }
      const data = flags.data
        ? await loadMeasuredSpeeds(flags.data)
        : syntheticSpeedData({ noise: flags.noise, seed: 1 });
      if (data.excludedRows > 0) note(`left out ${data.excludedRows} row(s) with a zero worker speed`);
      const result = evaluateSpeedModels(data, {
        samples: flags.samples,
        seeds: flags.seeds,
        choose: flags.choose ?? false,
      });
      if (result.skippedModels.length > 0)
        note(`skipped (≤ ${flags.samples} shapes): ${result.skippedModels.join(', ')}`);
      const heldOut = flags.leaveModelsOut
        ? leaveModelsOut(data, { samples: flags.samples, seeds: flags.seeds, choose: flags.choose ?? false })
        : null;
      if (flags.json) printJson(heldOut ? { ...result, leaveModelsOut: heldOut } : result);
      else {
        printTable(result);
        if (heldOut) printHeldOut(heldOut, result);
      }
    });
}
