/**
 * Composition root of the `optimus` command line (`npm run optimus -- <command>`): the command tree
 * of `program.ts`, run with one-line usage errors (`run-program.ts`). The client commands load only
 * what they need (`client-program.ts`): a CLI that lists jobs should answer at once.
 */
import { runProgram } from './run-program';

const argv = process.argv.slice(2);
const client = ['jobs', 'job', 'why'].includes(argv[0] ?? '');
const { buildProgram } = client ? await import('./client-program') : await import('./program');
await runProgram(buildProgram(), argv);
