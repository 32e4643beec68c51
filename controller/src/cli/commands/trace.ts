/**
 * `optimus trace export`: writes a built-in workload as a JSON trace; `optimus trace import`:
 * converts another simulator's workload into one (docs/trace-format.md).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { importDl2, parseDl2Dump } from '../../sim/dl2-import';
import { loadMeasured } from '../../sim/load';
import { resnet50Blocks } from '../../scheduling/paa';
import {
  MEASURED_INTERPOLATIONS,
  serializeTrace,
  type MeasuredInterpolation,
  type Trace,
} from '../../sim/trace';
import { buildWorkload, isWorkloadName, WORKLOAD_NAMES } from '../../sim/workloads';
import { intFlag, numberFlag, UsageError } from '../output';

interface ImportFlags {
  from: string;
  epochsPerEpoch: number;
  measured?: string;
  speeds: string;
}

/** The importers by source format. */
const IMPORTERS = ['dl2'] as const;

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read "${path}": ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`"${path}" is not JSON`);
  }
}

interface ExportFlags {
  workload: string;
  seed: number;
  jobs?: number;
  measured?: string;
  parameterBlocks?: string;
}

/** Models whose parameter blocks the project derives (`--parameter-blocks`). */
const BLOCK_MODELS = { 'resnet-50': resnet50Blocks } as const;

/**
 * `--parameter-blocks resnet-50`: every job without blocks of its own gets ResNet-50's. A what-if:
 * the project derives no other model's blocks, so this shows what PAA adds to a workload if every
 * model were as unbalanced under MXNet's default assignment as ResNet-50.
 */
function withBlocks(t: Trace, model: string | undefined): Trace {
  if (model === undefined) return t;
  // hasOwn: a name like "constructor" must not find Object's.
  const make = Object.hasOwn(BLOCK_MODELS, model)
    ? BLOCK_MODELS[model as keyof typeof BLOCK_MODELS]
    : undefined;
  if (!make) {
    throw new UsageError(
      `--parameter-blocks must be one of ${Object.keys(BLOCK_MODELS).join(', ')}, got "${model}"`,
    );
  }
  const blocks = make();
  return { ...t, jobs: t.jobs.map((j) => (j.parameterBlocks ? j : { ...j, parameterBlocks: blocks })) };
}

export function registerTraceCommands(program: Command): void {
  const trace = program.command('trace').description('workload traces (JSON) for the simulator');
  trace
    .command('export')
    .description('write a built-in workload as a JSON trace on stdout')
    .requiredOption('--workload <name>', `one of ${WORKLOAD_NAMES.join(', ')}`)
    .option('--seed <s>', 'workload seed', intFlag('seed', 0), 1)
    .option('--jobs <n>', 'number of jobs (default: the workload’s)', intFlag('jobs'))
    .option('--measured <csv>', 'measured-speeds CSV (default test/data/measured-speeds.csv)')
    .option(
      '--parameter-blocks <model>',
      `give every job without blocks this model's parameter blocks (${Object.keys(BLOCK_MODELS).join(', ')})`,
    )
    .option('--json', 'accepted for uniformity: the trace is one JSON document on stdout either way')
    .action((flags: ExportFlags) => {
      if (!isWorkloadName(flags.workload)) {
        throw new UsageError(
          `--workload must be one of ${WORKLOAD_NAMES.join(', ')}, got "${flags.workload}"`,
        );
      }
      const measured = loadMeasured(flags.measured);
      const t = buildWorkload(flags.workload, {
        seed: flags.seed,
        measured,
        ...(flags.jobs === undefined ? {} : { jobs: flags.jobs }),
      });
      process.stdout.write(serializeTrace(withBlocks(t, flags.parameterBlocks)));
    });
  trace
    .command('import')
    .description("convert another simulator's workload into a JSON trace on stdout")
    .argument('<file>', 'the workload to convert (dl2: a dl2-jobs dump, docs/trace-format.md)')
    .requiredOption('--from <format>', `source format: ${IMPORTERS.join(', ')}`)
    .option(
      '--epochs-per-epoch <n>',
      'dl2: DL2 epochs per epoch of the imported loss curve',
      numberFlag('epochs-per-epoch', 1),
      100,
    )
    .option(
      '--speeds <how>',
      `dl2: ${MEASURED_INTERPOLATIONS.join(' | ')} — ours, clamped at the largest measured shape; ours with DL2's extrapolation beyond it; DL2's speed function everywhere (the last two up to DL2's 16 PS and workers)`,
      'table',
    )
    .option('--measured <csv>', 'measured-speeds CSV (default test/data/measured-speeds.csv)')
    .option('--json', 'accepted for uniformity: the trace is one JSON document on stdout either way')
    .action((file: string, flags: ImportFlags) => {
      if (!(IMPORTERS as readonly string[]).includes(flags.from)) {
        throw new UsageError(`--from must be one of ${IMPORTERS.join(', ')}, got "${flags.from}"`);
      }
      if (!(MEASURED_INTERPOLATIONS as readonly string[]).includes(flags.speeds)) {
        throw new UsageError(
          `--speeds must be one of ${MEASURED_INTERPOLATIONS.join(', ')}, got "${flags.speeds}"`,
        );
      }
      const measured = loadMeasured(flags.measured);
      const t = importDl2(parseDl2Dump(readJson(file)), {
        measured,
        epochsPerEpoch: flags.epochsPerEpoch,
        speeds: flags.speeds as MeasuredInterpolation,
      });
      process.stdout.write(serializeTrace(t));
    });
}
