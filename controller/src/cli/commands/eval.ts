/** `optimus eval <speed|convergence>`: accuracy benchmarks of the estimation models. */
import type { Command } from 'commander';
import { registerEvalConvergence } from './eval-convergence';
import { registerEvalSpeed } from './eval-speed';

export function registerEvalCommands(program: Command): void {
  const evalCmd = program.command('eval').description('benchmark the estimation models against ground truth');
  registerEvalSpeed(evalCmd);
  registerEvalConvergence(evalCmd);
}
