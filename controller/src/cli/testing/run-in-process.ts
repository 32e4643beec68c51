/** Runs the `optimus` program in this process and captures what it writes (for CLI tests). */
import { buildProgram } from '../program';
import { runProgram } from '../run-program';

export interface Captured {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/** `optimus <argv…>` in-process: stdout, stderr and the exit code it would end with. */
export async function runOptimus(argv: readonly string[]): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const realOut = process.stdout.write.bind(process.stdout);
  const realErr = process.stderr.write.bind(process.stderr);
  const before = process.exitCode;
  process.exitCode = undefined;
  process.stdout.write = (s: string | Uint8Array) => (out.push(String(s)), true);
  process.stderr.write = (s: string | Uint8Array) => (err.push(String(s)), true);
  try {
    await runProgram(buildProgram(), argv);
    return { stdout: out.join(''), stderr: err.join(''), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    process.stdout.write = realOut;
    process.stderr.write = realErr;
    process.exitCode = before;
  }
}
