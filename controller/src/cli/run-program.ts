/**
 * Runs a commander program the way every `optimus` entry point does: a CommanderError keeps its
 * exit code (help, a bad flag), any other error is one line on stderr and exit code 1.
 */
import type { Command } from 'commander';
import { CommanderError } from 'commander';

export async function runProgram(program: Command, argv: readonly string[]): Promise<void> {
  try {
    await program.exitOverride().parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    process.stderr.write(`optimus: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
