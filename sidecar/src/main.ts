/** Entry point of the bundle: `node sidecar.cjs --log <file> --broker <url> --namespace … --job … --role … --index …`. */
import { ConfigError, helpText, loadConfig } from './config';
import { createLogger } from './log';
import { runSidecar } from './sidecar';

async function main(): Promise<number> {
  let cfg;
  try {
    cfg = loadConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`optimus-sidecar: ${err.message}\n(run with --help for all settings)\n`);
    return 2;
  }
  if (cfg === 'help') {
    process.stdout.write(helpText());
    return 0;
  }
  try {
    return await runSidecar(cfg, createLogger(cfg.debug));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`optimus-sidecar: ${err.message}\n`);
    return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`optimus-sidecar: fatal: ${String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  },
);
