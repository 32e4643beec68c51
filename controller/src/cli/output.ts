/** Output helpers that keep the `--json` contract: one JSON document on stdout, nothing else. */
import { InvalidArgumentError } from 'commander';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Human-readable progress and notes go to stderr so stdout stays machine-readable. */
export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * The command was called wrongly (a flag's value, a missing flag): printed as one line naming the
 * command and a pointer to its `--help` (`run-program.ts`), not as a failure of the work.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Thrown by a flag's parser: commander reports it as a usage error of the command being parsed
 * (one line and a pointer to `--help`, `run-program.ts`). The message names the flag.
 */
export const badFlag = (message: string): InvalidArgumentError => new InvalidArgumentError(message);

/** Parses a positive integer flag with a clear error naming the flag. */
export function intFlag(name: string, min = 1): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw badFlag(`--${name} must be an integer ≥ ${min}, got "${value}"`);
    return n;
  };
}

/** Parses a finite number flag with a clear error naming the flag. */
export function numberFlag(name: string, min = -Infinity, max = Infinity): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw badFlag(`--${name} must be a number in [${min}, ${max}], got "${value}"`);
    }
    return n;
  };
}
