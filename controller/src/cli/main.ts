/**
 * Composition root of the `optimus` command line (`npm run optimus -- <command>`): the command tree
 * of `program.ts`, run with one-line usage errors (`run-program.ts`).
 */
import { buildProgram } from './program';
import { runProgram } from './run-program';

await runProgram(buildProgram(), process.argv.slice(2));
