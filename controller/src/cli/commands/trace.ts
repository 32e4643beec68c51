/** `optimus trace export`: writes a built-in workload as a JSON trace (docs/trace-format.md). */
import type { Command } from 'commander';
import { loadMeasured } from '../../sim/load';
import { serializeTrace } from '../../sim/trace';
import { buildWorkload, isWorkloadName, WORKLOAD_NAMES } from '../../sim/workloads';
import { intFlag } from '../output';

interface ExportFlags {
  workload: string;
  seed: number;
  jobs?: number;
  measured?: string;
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
    .action((flags: ExportFlags) => {
      if (!isWorkloadName(flags.workload)) {
        throw new Error(`--workload must be one of ${WORKLOAD_NAMES.join(', ')}, got "${flags.workload}"`);
      }
      const measured = loadMeasured(flags.measured);
      const t = buildWorkload(flags.workload, {
        seed: flags.seed,
        measured,
        ...(flags.jobs === undefined ? {} : { jobs: flags.jobs }),
      });
      process.stdout.write(serializeTrace(t));
    });
}
