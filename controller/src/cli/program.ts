/**
 * The `optimus` command tree. Each command lives in `commands/<name>.ts` and registers itself; this
 * file only lists them. `main.ts` runs it; tests build it in-process.
 * Contract: with `--json`, stdout carries exactly one JSON document; everything else goes to stderr.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerBenchCommands } from './commands/bench';
import { registerEvalCommands } from './commands/eval';
import { registerJobCommands } from './commands/jobs';
import { registerKubernetesCommands } from './commands/kubernetes';
import { registerLocalCommands } from './commands/local';
import { registerOpenApiCommands } from './commands/openapi';
import { registerPaaCommands } from './commands/paa';
import { registerPredictCommands } from './commands/predict';
import { registerSimulateCommands } from './commands/simulate';
import { registerTraceCommands } from './commands/trace';

/** The version of this checkout (package.json), for `--version`. */
export const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export function buildProgram(): Command {
  const program = new Command('optimus')
    .description('Optimus: dynamic resource scheduling for parameter-server deep-learning jobs')
    .version(VERSION, '-V, --version', 'print the version')
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  registerEvalCommands(program);
  registerPredictCommands(program);
  registerPaaCommands(program);
  registerBenchCommands(program);
  registerSimulateCommands(program);
  registerTraceCommands(program);
  registerLocalCommands(program);
  registerKubernetesCommands(program);
  registerJobCommands(program);
  registerOpenApiCommands(program);
  return program;
}
