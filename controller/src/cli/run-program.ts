/**
 * Runs a commander program the way every `optimus` entry point does: a usage error (a bad flag, an
 * unknown command, a flag value out of range) is one line naming the command, then where its help
 * is, as kubectl says it (`See 'optimus simulate --help'.`), never the whole help; any other error is
 * one line on stderr. Exit code 1 for both; 0 for `--help` and `--version`.
 */
import type { Command } from 'commander';
import { CommanderError } from 'commander';
import { UsageError } from './output';

/** `optimus trace export`: the command's full name, as the user types it. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Commander's error text (`error: unknown option '--x'\n(Did you mean --y?)`) as one line that names
 * the command; an invalid flag value keeps only our message when it already names the flag.
 */
export function usageLine(path: string, commanderText: string): string {
  let text = commanderText
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  const invalid = /^option '(--[\w-]+)[^']*' argument '.*?' is invalid\. (.*)$/s.exec(text);
  if (invalid?.[2]?.startsWith(invalid[1] ?? '')) text = invalid[2];
  return `${path}: ${text}\nSee '${path} --help'.\n`;
}

function* commands(root: Command): Generator<Command> {
  yield root;
  for (const sub of root.commands) yield* commands(sub);
}

/** Every command of the tree prints usage errors as `usageLine` does, without the help. */
function oneLineUsageErrors(root: Command): void {
  for (const cmd of commands(root)) {
    const path = commandPath(cmd);
    cmd.showHelpAfterError(false);
    // Throw rather than exit, on every command: the exit code is set once, in runProgram.
    cmd.exitOverride();
    cmd.configureOutput({ outputError: (str, write) => write(usageLine(path, str)) });
  }
}

export async function runProgram(program: Command, argv: readonly string[]): Promise<void> {
  oneLineUsageErrors(program);
  // The command whose action runs, so a UsageError thrown there can point at its help.
  let running: Command = program;
  program.hook('preAction', (_root, action) => {
    running = action;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    if (err instanceof UsageError) process.stderr.write(usageLine(commandPath(running), err.message));
    else process.stderr.write(`optimus: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
