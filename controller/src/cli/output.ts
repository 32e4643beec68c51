/** Output helpers that keep the `--json` contract: one JSON document on stdout, nothing else. */

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Human-readable progress and notes go to stderr so stdout stays machine-readable. */
export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Parses a positive integer flag with a clear error naming the flag. */
export function intFlag(name: string, min = 1): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} must be an integer ≥ ${min}, got "${value}"`);
    return n;
  };
}

/** Parses a finite number flag with a clear error naming the flag. */
export function numberFlag(name: string, min = -Infinity, max = Infinity): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new Error(`--${name} must be a number in [${min}, ${max}], got "${value}"`);
    }
    return n;
  };
}
