/**
 * The `optimus` program with only the client commands (`jobs`, `job`, `why`): what `main.ts` runs for
 * them, so listing jobs does not first load the simulator, the models and the Kubernetes client.
 */
import { Command } from 'commander';
import { registerJobCommands } from './commands/jobs';

export function buildProgram(): Command {
  const program = new Command('optimus').configureOutput({
    writeOut: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
  });
  registerJobCommands(program);
  return program;
}
