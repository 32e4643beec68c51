/**
 * `npm run chart:render`: prints the chart's manifests rendered with the default values, for users
 * who prefer `kubectl apply -f` to `helm install`. The release Namespace comes first
 * (`namespace.create=true`), so the output applies to an empty cluster. Extra arguments go to `helm template`, e.g.
 * `npm run chart:render -- --namespace ml-system -f my-values.yaml > optimus.yaml`.
 *
 * Uses the helm binary carried by an installed npm package (see ./helm.ts); nothing is downloaded.
 * Note: without a cluster, `lookup` finds nothing, so each run generates fresh webhook certificates
 * and broker passwords; keep the output you applied, or use cert-manager.
 */
import { CHART_DIR, runHelm } from './helm';

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      'Usage: npm run chart:render -- [helm template flags]\n' +
        'Prints the optimus chart rendered with the default values (release "optimus", namespace\n' +
        '"optimus-system", the Namespace object first); flags such as --namespace, -f FILE or --set k=v\n' +
        'are passed to helm template.\n',
    );
    return 0;
  }
  const hasNamespace = argv.some((a) => a === '--namespace' || a === '-n' || a.startsWith('--namespace='));
  // The `helm test` hook objects are left out: applied by kubectl they would run once, at apply time.
  const args = [
    'template',
    'optimus',
    CHART_DIR,
    '--skip-tests',
    ...(hasNamespace ? [] : ['--namespace', 'optimus-system']),
    '--set',
    'namespace.create=true',
    ...argv,
  ];
  const r = await runHelm(args);
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  return r.code;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`chart:render: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
