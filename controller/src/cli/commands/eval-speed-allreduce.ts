/**
 * The all-reduce half of `optimus eval speed`: our all-reduce speed model against Pollux's
 * throughput model on per-placement measurements (test/data/pollux). Composition only: the
 * protocol is `models/speed/allreduce-eval.ts`, the reading `cli/pollux-data-file.ts`.
 */
import { loadAllReduceData } from '../pollux-data-file';
import { evaluateAllReduceModels, type AllReduceEvalResult } from '../../models/speed/allreduce-eval';
import { note, printJson } from '../output';

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

function row(
  name: string,
  configs: string,
  e: AllReduceEvalResult['models'][string] | AllReduceEvalResult,
): string {
  return `${name.padEnd(14)}${configs.padStart(8)}${pct(e.medianError).padStart(9)}${pct(e.p90Error).padStart(9)}${pct(e.baseline.medianError).padStart(12)}${pct(e.baseline.p90Error).padStart(12)}${pct(e.oursCloser).padStart(13)}`;
}

/** Where our median or p90 is above Pollux's: said, not hidden. */
function losses(r: AllReduceEvalResult): string[] {
  const out: string[] = [];
  for (const [name, m] of Object.entries(r.models)) {
    if (m.medianError > m.baseline.medianError)
      out.push(`${name} median ${pct(m.medianError)} vs ${pct(m.baseline.medianError)}`);
    if (m.p90Error > m.baseline.p90Error)
      out.push(`${name} p90 ${pct(m.p90Error)} vs ${pct(m.baseline.p90Error)}`);
  }
  if (r.p90Error > r.baseline.p90Error) out.push(`ALL p90 ${pct(r.p90Error)} vs ${pct(r.baseline.p90Error)}`);
  return out;
}

function printTable(r: AllReduceEvalResult): void {
  const lines = [
    `all-reduce speed model: ${r.samples} measured configurations per fit, seeds 1..${r.seeds}`,
    `(relative error of steps/s — at a configuration, of samples/s too — at the unseen configurations; baseline: Pollux's throughput model fitted on the same samples)`,
    `${'model'.padEnd(14)}${'configs'.padStart(8)}${'median'.padStart(9)}${'p90'.padStart(9)}${'pollux med'.padStart(12)}${'pollux p90'.padStart(12)}${'ours closer'.padStart(13)}`,
    ...Object.entries(r.models).map(([name, m]) => row(name, String(m.configurations), m)),
    row('ALL', String(r.predictions), r),
    `90% interval coverage: ${pct(r.intervalCoverage)}`,
  ];
  if (r.beyond)
    lines.push(
      `beyond the measured nodes (scalability.csv, same fits): median ${pct(r.beyond.medianError)}, p90 ${pct(r.beyond.p90Error)}; pollux ${pct(r.beyond.baseline.medianError)}, ${pct(r.beyond.baseline.p90Error)}`,
    );
  const lost = losses(r);
  lines.push(lost.length > 0 ? `ours is worse: ${lost.join('; ')}` : 'ours is no worse anywhere above');
  process.stdout.write(`${lines.join('\n')}\n`);
}

export interface AllReduceEvalFlags {
  readonly samples: number;
  readonly seeds: number;
  readonly json?: boolean;
}

export async function runAllReduceEval(path: string, flags: AllReduceEvalFlags): Promise<void> {
  const data = await loadAllReduceData(path);
  const result = evaluateAllReduceModels(data, { samples: flags.samples, seeds: flags.seeds });
  if (result.skippedModels.length > 0)
    note(`skipped (≤ ${flags.samples} configurations): ${result.skippedModels.join(', ')}`);
  if (flags.json) printJson(result);
  else printTable(result);
}
