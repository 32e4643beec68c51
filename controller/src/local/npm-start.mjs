/**
 * `npm start`'s entry: says something at once — loading the controller's modules takes seconds on
 * a busy machine, and a terminal that stays silent after npm's header looks hung — then runs the
 * `optimus local` command as the CLI defines it (`npm start -- --help` lists its flags), loading
 * only what that command needs rather than every command of the CLI.
 *
 * Plain JavaScript, so the first line is written before TypeScript support (tsx) is even loaded.
 * tsx is registered in this process rather than run as its CLI wrapper: that wrapper relays Ctrl-C
 * to us and, when our event loop has not answered within 30 ms (a busy round), sends it again and
 * then SIGKILL — which no orderly stop survives (ADR 0033).
 */
process.stderr.write('optimus local: loading…\n');
const { register } = await import('tsx/esm/api');
register();
const [{ Command }, { registerLocalCommands }, { runProgram }] = await Promise.all([
  import('commander'),
  import('../cli/commands/local.ts'),
  import('../cli/run-program.ts'),
]);
const program = new Command('optimus');
registerLocalCommands(program);
await runProgram(program, ['local', ...process.argv.slice(2)]);
