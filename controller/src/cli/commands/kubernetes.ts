/**
 * `optimus kubernetes …`: the Kubernetes mode. `run` starts the controller (leader election,
 * informers, executor, webhook, runtime); `crd` and `rbac` print what the chart installs;
 * `review` answers an AdmissionReview file the way the webhook would.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { ConfigError, loadConfig } from '../../config/env';
import { crdManifest, crdYaml, rbacRules } from '../../k8s/crd';
import { loadKubeConfig } from '../../k8s/kube-config';
import { runKubernetes } from '../../k8s/run-kubernetes';
import { reviewAdmission } from '../../k8s/webhook/admission';
import { DEFAULT_SIDECAR_RESOURCES } from '../../k8s/webhook/sidecar-config';
import { note, printJson } from '../output';

interface ReviewFlags {
  image: string;
  broker: string;
  credentialsSecret?: string;
  classic?: boolean;
}

function readInput(file: string): unknown {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${file}: not valid JSON`);
  }
}

function registerRun(k8s: Command): void {
  k8s
    // The default subcommand: the chart's container runs `optimus kubernetes`.
    .command('run', { isDefault: true })
    .description(
      'run the controller in a cluster (the default; configuration from the environment, see docs/controller-config.md)',
    )
    .option('--watch-namespace <ns>', 'only schedule OptimusJobs of this namespace (default: all)')
    .action(async (flags: { watchNamespace?: string }) => {
      let cfg;
      try {
        cfg = loadConfig(process.env);
      } catch (err) {
        if (err instanceof ConfigError) throw new Error(err.message);
        throw err;
      }
      const run = await runKubernetes({
        cfg,
        kubeConfig: loadKubeConfig(),
        ...(flags.watchNamespace ? { watchNamespace: flags.watchNamespace } : {}),
      });
      const signalled = new Promise<string>((resolve) => {
        process.once('SIGTERM', () => resolve('SIGTERM'));
        process.once('SIGINT', () => resolve('SIGINT'));
      });
      const why = await Promise.race([signalled, run.lost.then(() => 'lost leadership')]);
      note(`optimus kubernetes: stopping (${why})`);
      const stopped = run.stop();
      if (why === 'lost leadership') {
        // A deposed leader must stop writing promptly, even mid-rollout: give the stop a bounded
        // time, then exit non-zero so the pod restarts and campaigns again as a follower.
        await Promise.race([stopped, new Promise((r) => setTimeout(r, DEPOSED_STOP_MS).unref())]);
        process.exit(1);
      }
      await stopped;
    });
}

/** How long a replica that lost the lease may take to stop before it exits anyway. */
const DEPOSED_STOP_MS = 10_000;

export function registerKubernetesCommands(program: Command): void {
  const k8s = program
    .command('kubernetes')
    .description('Kubernetes mode: the controller, its CRD, RBAC rules and webhook');
  registerRun(k8s);
  k8s
    .command('crd')
    .description('print the OptimusJob CustomResourceDefinition (YAML, or JSON with --json)')
    .option('--json', 'print one JSON document')
    .action((flags: { json?: boolean }) => {
      if (flags.json) printJson(crdManifest());
      else process.stdout.write(crdYaml());
    });
  k8s
    .command('rbac')
    .description("print the controller's RBAC rules (YAML, or JSON with --json)")
    .option('--json', 'print one JSON document')
    .action((flags: { json?: boolean }) => {
      if (flags.json) printJson(rbacRules());
      else process.stdout.write(stringify(rbacRules()));
    });
  k8s
    .command('review')
    .description('answer an AdmissionReview (file or - for stdin) as the sidecar-injection webhook would')
    .argument('<file>', 'AdmissionReview JSON, or - for stdin')
    .option('--image <image>', 'sidecar image', 'ghcr.io/optimus/sidecar:latest')
    .option('--broker <url>', 'broker URL the sidecar uses', 'mqtt://optimus-broker:1883')
    .option('--credentials-secret <name>', 'Secret with the broker username and password')
    .option('--classic', 'inject a classic sidecar (clusters older than 1.29)')
    .action((file: string, flags: ReviewFlags) => {
      const r = reviewAdmission(readInput(file), {
        image: flags.image,
        resources: DEFAULT_SIDECAR_RESOURCES,
        brokerUrl: flags.broker,
        native: !flags.classic,
        ...(flags.credentialsSecret ? { credentialsSecret: flags.credentialsSecret } : {}),
      });
      if (!r.ok) throw new Error(`${file}: ${r.error}`);
      printJson(r.review);
    });
}
