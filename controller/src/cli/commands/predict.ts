/** `optimus predict convergence`: total steps to convergence from a loss history (paper §3.1, Eq. 1). */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { estimateConvergence } from '../../models/convergence';
import type { ConvergenceEstimate } from '../../models/convergence';
import { intFlag, note, numberFlag, printJson } from '../output';
import { MIN_FIT_POINTS } from '../../models/convergence/estimate';
import { parseLossCsv } from '../../models/convergence/loss-csv';
import { plural } from '../../scheduling/words';

interface PredictConvergenceFlags {
  readonly input: string;
  readonly stepsPerEpoch: number;
  readonly threshold: number;
  readonly patience: number;
  readonly json?: boolean;
}

/** The JSON document of the command: the contract's fields first, then the extras. */
export function convergenceDocument(est: ConvergenceEstimate): Record<string, unknown> {
  if (est.status !== 'ok') return { status: est.status, reason: est.reason };
  return {
    predictedTotalSteps: est.predictedTotalSteps,
    lower: est.lower,
    upper: est.upper,
    remainingSteps: est.remainingSteps,
    beta: est.beta,
    status: est.status,
    converged: est.converged,
    ...(est.fitStartStep === undefined ? {} : { fitStartStep: est.fitStartStep }),
    ...(est.lrDropStep === undefined ? {} : { lrDropStep: est.lrDropStep }),
    ...(est.exponential === undefined ? {} : { exponential: est.exponential }),
  };
}

function printHuman(est: ConvergenceEstimate): void {
  if (est.status !== 'ok') {
    process.stdout.write(`insufficient data: ${est.reason}\n`);
    return;
  }
  const [b0, b1, b2] = est.beta.map((b) => b.toPrecision(4));
  const e = est.exponential;
  const curve =
    e === undefined
      ? `l(k) = 1/(${b0}·k + ${b1}) + ${b2}`
      : `l(k) = ${e.a.toPrecision(4)}·exp(−${e.r.toPrecision(4)}·k) + ${e.c.toPrecision(4)} (exponential: it fits far better than 1/(${b0}·k + ${b1}) + ${b2})`;
  const lines = [
    `predicted total steps: ${est.predictedTotalSteps} (interval ${est.lower}–${est.upper})`,
    `remaining steps:       ${est.remainingSteps}${est.converged ? ' (already converged)' : ''}`,
    `fitted curve:          ${curve}` +
      (est.fitStartStep ? `, k = step − ${Math.round(est.fitStartStep)}` : ''),
  ];
  if (est.lrDropStep !== undefined) lines.push(`learning-rate drop at step ${Math.round(est.lrDropStep)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function runPredictConvergence(flags: PredictConvergenceFlags): void {
  let text: string;
  try {
    text = readFileSync(flags.input, 'utf8');
  } catch (err) {
    throw new Error(
      `--input: cannot read "${flags.input}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = parseLossCsv(text);
  if (parsed.rejected > 0) {
    note(
      `skipped ${plural(parsed.rejected, 'bad row')} of ${flags.input} (lines ${parsed.rejectedLines.join(', ')}…)`,
    );
  }
  // Too few points is a mistake in the input (a wrong file, a wrong column), not a prediction.
  if (parsed.points.length < MIN_FIT_POINTS)
    throw new Error(
      `--input: "${flags.input}" has ${plural(parsed.points.length, 'valid step,loss row')}; at least ${MIN_FIT_POINTS} are needed`,
    );
  const rule = { stepsPerEpoch: flags.stepsPerEpoch, threshold: flags.threshold, patience: flags.patience };
  const est = estimateConvergence(parsed.points, rule);
  if (flags.json === true) printJson(convergenceDocument(est));
  else printHuman(est);
}

export function registerPredictCommands(program: Command): void {
  const predict = program.command('predict').description('predictions of the estimation models');
  predict
    .command('convergence')
    .description('predict the total steps to convergence from a loss history (CSV with columns step,loss)')
    .requiredOption('--input <csv>', 'CSV file with columns step,loss')
    .requiredOption('--steps-per-epoch <n>', 'steps (mini-batches) per epoch', intFlag('steps-per-epoch'))
    .requiredOption(
      '--threshold <δ>',
      'per-epoch decrease of the normalised loss',
      numberFlag('threshold', 1e-9, 1),
    )
    .requiredOption('--patience <K>', 'epochs in a row the decrease must stay below δ', intFlag('patience'))
    .option('--json', 'print one JSON document on stdout')
    .action((flags: PredictConvergenceFlags) => runPredictConvergence(flags));
}
