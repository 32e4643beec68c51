/**
 * `optimus bench schedule`: how long one Optimus scheduling round takes at scale (paper §6.4:
 * 4,000 jobs, ~100,000 tasks, 16,000 nodes in under 5 s on one core; our target ≤ 0.5 s).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { timeRuntimeRound } from '../../bench/round';
import { timeRound, type RoundTiming } from '../../scheduling/bench/time-round';
import { intFlag, note, printJson } from '../output';

interface BenchScheduleFlags {
  readonly jobs: number;
  readonly nodes: number;
  readonly seed: number;
  readonly rounds: number;
  readonly sweep?: boolean;
  readonly json?: boolean;
}

const SWEEP_JOBS = [1000, 2000, 4000, 8000] as const;

function row(t: RoundTiming): string {
  const s = (x: number) => x.toFixed(3).padStart(8);
  return `${String(t.jobs).padStart(6)} ${String(t.nodes).padStart(7)} ${String(t.tasks).padStart(8)} ${s(t.seconds)} ${s(t.cpuSeconds)} ${s(t.allocationSeconds)} ${s(t.placementSeconds)} ${String(t.waiting).padStart(7)}`;
}

export function registerBenchCommands(program: Command): void {
  const bench = program.command('bench').description('benchmarks of the scheduler');
  bench
    .command('schedule')
    .description('time one Optimus round (allocation + placement) on a random heterogeneous cluster')
    .option('--jobs <J>', 'number of jobs', intFlag('jobs'), 4000)
    .option('--nodes <N>', 'number of servers', intFlag('nodes'), 16000)
    .option('--seed <s>', 'seed of the random cluster and job mix', intFlag('seed', 0), 1)
    .option('--rounds <n>', 'rounds to time; the median is reported', intFlag('rounds'), 5)
    .option('--sweep', 'time 1k/2k/4k/8k jobs (nodes = 4 × jobs) and print a table')
    .option('--json', 'print one JSON document on stdout')
    .action((flags: BenchScheduleFlags) => {
      const now = () => performance.now();
      const cpu = () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      };
      const configs = flags.sweep
        ? SWEEP_JOBS.map((jobs) => ({ jobs, nodes: 4 * jobs }))
        : [{ jobs: flags.jobs, nodes: flags.nodes }];
      // The machine is shared: the 1-minute load average says how much the figures are inflated.
      const results: (RoundTiming & { loadAverage1m: number })[] = [];
      for (const c of configs) {
        note(`timing ${c.jobs} jobs on ${c.nodes} nodes, ${flags.rounds} rounds…`);
        const timing = timeRound({ ...c, seed: flags.seed, rounds: flags.rounds }, now, cpu);
        results.push({ ...timing, loadAverage1m: Number((loadavg()[0] ?? 0).toFixed(2)) });
      }
      if (flags.json === true) {
        printJson(flags.sweep ? results : results[0]);
        return;
      }
      const head = '  jobs   nodes    tasks  seconds      cpu    alloc    place waiting  load';
      const lines = results.map((r) => `${row(r)} ${r.loadAverage1m.toFixed(1).padStart(5)}`);
      process.stdout.write(`${[head, ...lines].join('\n')}\n`);
    });
  bench
    .command('round')
    .description(
      'time one whole runtime round (observe → refit → decide → plan → dispatch) through the shipped controller',
    )
    .option('--jobs <J>', 'number of running jobs', intFlag('jobs'), 1000)
    .option('--nodes <N>', 'number of servers', intFlag('nodes'), 4000)
    .option('--rounds <n>', 'rounds to time; the median is reported', intFlag('rounds'), 5)
    .option('--policy <name>', 'the policy', 'optimus')
    .option('--json', 'print one JSON document on stdout')
    .action(
      async (flags: { jobs: number; nodes: number; rounds: number; policy: string; json?: boolean }) => {
        note(`timing whole rounds: ${flags.jobs} jobs on ${flags.nodes} nodes, ${flags.rounds} rounds…`);
        const r = await timeRuntimeRound(flags, {
          now: () => performance.now(),
          cpu: () => {
            const u = process.cpuUsage();
            return (u.user + u.system) / 1000;
          },
        });
        const out = { ...r, loadAverage1m: Number((loadavg()[0] ?? 0).toFixed(2)) };
        if (flags.json === true) return printJson(out);
        process.stdout.write(
          `${r.jobs} jobs on ${r.nodes} nodes: one runtime round ${r.seconds.toFixed(3)} s (CPU ${r.cpuSeconds.toFixed(3)} s), ${r.refitsPerRound} refits per round, load ${out.loadAverage1m}\n`,
        );
      },
    );
}
