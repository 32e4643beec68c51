/**
 * Entry point of the controller image (`controller/build.mjs` bundles it into one file):
 * `optimus kubernetes run|crd|rbac|review`, with the CRD and RBAC rules embedded. The full CLI
 * (local mode, simulator, benchmarks) stays in `main.ts`, run from the sources.
 */
import { Command } from 'commander';
import { registerKubernetesCommands } from './commands/kubernetes';
import { runProgram } from './run-program';

const program = new Command('optimus')
  .description('Optimus controller (Kubernetes mode)')
  .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
registerKubernetesCommands(program);
await runProgram(program, process.argv.slice(2));
