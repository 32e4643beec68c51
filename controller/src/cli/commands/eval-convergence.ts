/** `optimus eval convergence`: accuracy of the convergence model on synthetic curves with known truth. */
import type { Command } from 'commander';
import { PROGRESS_LEVELS, runConvergenceBenchmark } from '../../models/convergence/benchmark';
import type { BenchmarkResult, FamilyFigures, ProgressFigures } from '../../models/convergence/benchmark';
import { ALPHA } from '../../models/convergence/paired';
import { STANDARD_SCENARIOS } from '../../models/convergence/scenarios';
import { intFlag, printJson } from '../output';

interface EvalConvergenceFlags {
  readonly seed: number;
  readonly replicates: number;
  readonly json?: boolean;
}

/** The targets: median |error| ≤ 10% at 50% progress on paper-form curves; coverage ≥ 80%. */
export function targetsMet(r: BenchmarkResult): { medianErrorAt50: boolean; coverage: boolean } {
  const at50 = r.paperForm['0.5']?.medianError;
  return {
    medianErrorAt50: at50 !== null && at50 !== undefined && at50 <= 0.1,
    coverage: r.coverage !== null && r.coverage >= 0.8,
  };
}

/**
 * The goal against the paper's procedure (abstentions scored by the fallback): never worse on
 * 1/k curves, better on learning-rate drops, exponential and plateau curves; per progress level.
 */
export function versusPaper(r: BenchmarkResult): Record<string, Record<string, boolean>> {
  return judge(r, (f, want) => {
    const ours = f.ours.medianError ?? Infinity;
    const paper = f.paper.medianError ?? Infinity;
    return want === 'better' ? ours < paper : ours <= paper;
  });
}

/**
 * The same goal judged fit by fit (`paired.ts`): better = ours closer on significantly more fits
 * (sign test, p < 0.05); not worse = the paper's procedure is not closer on significantly more.
 */
export function versusPaperPaired(r: BenchmarkResult): Record<string, Record<string, boolean>> {
  return judge(r, (f, want) =>
    want === 'better' ? f.paired.verdict === 'better' : f.paired.verdict !== 'worse',
  );
}

const GOAL: Readonly<Record<string, 'not-worse' | 'better'>> = {
  inverse: 'not-worse',
  'lr-drop': 'better',
  exponential: 'better',
  plateau: 'better',
};

function judge(
  r: BenchmarkResult,
  met: (f: FamilyFigures, want: 'not-worse' | 'better') => boolean,
): Record<string, Record<string, boolean>> {
  const out: Record<string, Record<string, boolean>> = {};
  for (const [family, want] of Object.entries(GOAL)) {
    const levels = r.families[family];
    if (!levels) continue;
    out[family] = Object.fromEntries(Object.entries(levels).map(([p, f]) => [p, met(f, want)]));
  }
  return out;
}

const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? '   –  ' : `${(100 * x).toFixed(1)}%`.padStart(6);

function row(name: string, figures: Record<string, ProgressFigures>): string {
  const cells = PROGRESS_LEVELS.map((p) => {
    const f = figures[String(p)];
    return `${pct(f?.medianError)} ${pct(f?.coverage)} ${pct(f?.baselineMedianError)}`;
  });
  return `${name.padEnd(15)} ${cells.join('  |  ')}`;
}

function familyRow(
  name: string,
  levels: Record<string, FamilyFigures>,
  met: Record<string, boolean> = {},
): string {
  const cells = PROGRESS_LEVELS.map((p) => {
    const f = levels[String(p)];
    const mark = met[String(p)] === undefined ? ' ' : met[String(p)] ? '✓' : '✗';
    return `${pct(f?.ours.medianError)} ${pct(f?.ours.meanError)} ${pct(f?.ours.abstentions)} ${pct(f?.paper.medianError)} ${pct(f?.paper.meanError)} ${pct(f?.paper.abstentions)} ${mark}`;
  });
  return `${name.padEnd(12)} ${cells.join('  |  ')}`;
}

function printFamilies(r: BenchmarkResult): string[] {
  const met = versusPaper(r);
  const head = PROGRESS_LEVELS.map(
    (p) => `${String(100 * p).padStart(2)}%: ours med  mean abst.  paper med  mean abst.  `,
  ).join('|  ');
  return [
    '',
    'ours vs the paper’s procedure per curve family (median and mean |error|; an abstention is answered by the',
    `runtime’s prior for a simulated job — half of what its 40-epoch bound leaves — and scored; abst. = share abstained)`,
    `${'family'.padEnd(12)} ${head}`,
    ...Object.entries(r.families).map(([f, levels]) => familyRow(f, levels, met[f])),
    '✓/✗: the goal on the median (1/k: ours ≤ paper; lr-drop, exponential, plateau: ours < paper)',
    ...printPaired(r),
  ];
}

function pairedRow(
  name: string,
  levels: Record<string, FamilyFigures>,
  met: Record<string, boolean> = {},
): string {
  const cells = PROGRESS_LEVELS.map((p) => {
    const f = levels[String(p)]?.paired;
    if (!f) return ' '.repeat(27);
    const mark = met[String(p)] === undefined ? ' ' : met[String(p)] ? '✓' : '✗';
    const counts = `${f.oursCloser}/${f.ties}/${f.paperCloser}`.padStart(10);
    return `${counts} ${f.p < 0.001 ? '<0.001' : f.p.toFixed(3)}  ${f.verdict.padEnd(13)} ${mark}`;
  });
  return `${name.padEnd(12)} ${cells.join('  |  ')}`;
}

function printPaired(r: BenchmarkResult): string[] {
  const met = versusPaperPaired(r);
  const head = PROGRESS_LEVELS.map(
    (p) => `${String(100 * p).padStart(2)}%: W/T/L      p  verdict        `,
  ).join('|  ');
  return [
    '',
    'fit by fit on the same points (W/T/L: fits where ours is closer to the truth / as close / the paper’s is',
    `closer; p: two-sided sign test over the fits that do not tie; a difference needs p < ${ALPHA})`,
    `${'family'.padEnd(12)} ${head}`,
    ...Object.entries(r.families).map(([f, levels]) => pairedRow(f, levels, met[f])),
    '✓/✗: the goal fit by fit (1/k: the paper’s not closer on significantly more fits; others: ours on significantly more)',
  ];
}

function printHuman(r: BenchmarkResult): void {
  const head = PROGRESS_LEVELS.map((p) => `${String(100 * p).padStart(2)}%: error  cover  paper`).join(
    '  |  ',
  );
  const lines = [
    `convergence benchmark, seed ${r.seed}, ${r.replicates} replicates per scenario and progress level`,
    `${'scenario'.padEnd(15)} ${head}`,
    ...Object.entries(r.scenarios).map(([name, s]) => row(name, s.byProgress)),
    row('paper-form', r.paperForm),
    row('overall', r.overall),
    `interval coverage overall: ${pct(r.coverage)}`,
    'error: median |predicted − true| / true; cover: share of intervals holding the truth;',
    "paper: median error of the paper's own procedure (transform NNLS, no drop detection) on the same points",
  ];
  lines.push(...printFamilies(r));
  const met = targetsMet(r);
  lines.push(
    `targets: median error at 50% ≤ 10% ${met.medianErrorAt50 ? 'met' : 'NOT met'}, coverage ≥ 80% ${met.coverage ? 'met' : 'NOT met'}`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function registerEvalConvergence(program: Command): void {
  program
    .command('convergence')
    .description('benchmark the convergence model on synthetic loss curves with known ground truth')
    .option('--seed <n>', 'seed of the noise (deterministic)', intFlag('seed', 0), 1)
    .option('--replicates <n>', 'noisy copies of each scenario per progress level', intFlag('replicates'), 30)
    .option('--json', 'print one JSON document on stdout')
    .action((flags: EvalConvergenceFlags) => {
      const result = runConvergenceBenchmark(STANDARD_SCENARIOS, {
        seed: flags.seed,
        replicates: flags.replicates,
      });
      if (flags.json === true)
        printJson({
          ...result,
          targetsMet: targetsMet(result),
          versusPaper: versusPaper(result),
          versusPaperPaired: versusPaperPaired(result),
        });
      else printHuman(result);
    });
}
