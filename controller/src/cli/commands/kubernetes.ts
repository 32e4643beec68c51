/**
 * `optimus kubernetes …`: the Kubernetes mode. `run` starts the controller (leader election,
 * informers, executor, webhook, runtime); `crd` and `rbac` print what the chart installs;
 * `review` answers an AdmissionReview file the way the webhook would.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import type { ControllerConfig, SettingVariable } from '../../config/env';
import { ConfigError, loadConfig, SETTINGS, apiTokenProblem } from '../../config/env';
import { waitForApi } from '../../k8s/api/api-reachability';
import { policyNames } from '../../scheduling/registry';
import { crdManifest, crdYaml, rbacRuleSets } from '../../k8s/api/crd';
import { loadKubeConfig } from '../../k8s/api/kube-config';
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

/** commander's camelCase name of a flag: `--scheduling-interval-sec` → `schedulingIntervalSec`. */
const optionKey = (flag: string): string =>
  flag.replace(/^--/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The flag values given, keyed by the variable they set (flags win over the environment). */
function flagValues(flags: Readonly<Record<string, unknown>>): Partial<Record<SettingVariable, string>> {
  const out: Partial<Record<SettingVariable, string>> = {};
  for (const [variable, [flag]] of Object.entries(SETTINGS)) {
    const v = flags[optionKey(flag)];
    if (typeof v === 'string') out[variable as SettingVariable] = v;
  }
  return out;
}

/** Loads and checks the configuration the way `run` would; the error names the flag or variable. */
export function checkedConfig(
  env: NodeJS.ProcessEnv,
  flags: Readonly<Record<string, unknown>>,
): ControllerConfig {
  let cfg: ControllerConfig;
  try {
    cfg = loadConfig(env, {}, flagValues(flags));
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(err.message);
    throw err;
  }
  const problem = configProblem(cfg);
  if (problem) throw new Error(problem);
  return cfg;
}

/** What `run` would refuse besides malformed values: missing combinations, unknown names. */
export function configProblem(cfg: ControllerConfig): string | null {
  if (!cfg.brokerUrl) return 'OPTIMUS_BROKER_URL (--broker-url) is required in Kubernetes mode';
  if (!policyNames().includes(cfg.policy))
    return `OPTIMUS_POLICY (--policy): unknown policy "${cfg.policy}"; known: ${policyNames().join(', ')}`;
  if (cfg.sidecarImage && !cfg.sidecarBrokerUrl)
    return 'OPTIMUS_SIDECAR_BROKER_URL (or OPTIMUS_BROKER_URL) is required with OPTIMUS_SIDECAR_IMAGE';
  const token = apiTokenProblem(cfg);
  if (token) return token;
  if (cfg.credentialsSource && !cfg.sidecarCredentialsSecret)
    return 'OPTIMUS_CREDENTIALS_SOURCE (--credentials-source) needs OPTIMUS_SIDECAR_CREDENTIALS_SECRET: the name it is copied to';
  return null;
}

function registerRun(k8s: Command): void {
  const run = k8s
    // The default subcommand: the chart's container runs `optimus kubernetes`.
    .command('run', { isDefault: true })
    .description(
      'run the controller in a cluster (the default). Every setting is a flag and an environment variable ' +
        '(docs/controller-config.md); a flag wins over the variable',
    )
    .option(
      '--check-config',
      'check the configuration from flags and environment, print it, and exit (0: ok)',
    )
    .option('--json', 'with --check-config: print the configuration as one JSON document');
  for (const [variable, [flag, help]] of Object.entries(SETTINGS))
    run.option(`${flag} <value>`, `${help} [${variable}]`);
  run.action(async (flags: Record<string, unknown>) => {
    const cfg = checkedConfig(process.env, flags);
    if (flags['checkConfig']) {
      if (flags['json']) printJson({ ok: true, config: cfg });
      else note(`optimus kubernetes: configuration OK (policy ${cfg.policy}, broker ${cfg.brokerUrl ?? ''})`);
      return;
    }
    const kubeConfig = loadKubeConfig();
    const aborted = new AbortController();
    const onSignal = () => aborted.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    const reached = await waitForApi({ kubeConfig, say: note, signal: aborted.signal });
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    if (!reached) return;
    const running = await runKubernetes({ cfg, kubeConfig });
    const signalled = new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    const why = await Promise.race([signalled, running.lost.then(() => 'lost leadership')]);
    note(`optimus kubernetes: stopping (${why})`);
    const stopped = running.stop();
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
    .description("print the controller's RBAC rules by where they apply (YAML, or JSON with --json)")
    .option('--json', 'print one JSON document')
    .action((flags: { json?: boolean }) => {
      if (flags.json) printJson(rbacRuleSets());
      else process.stdout.write(stringify(rbacRuleSets()));
    });
  k8s
    .command('review')
    .description('answer an AdmissionReview (file or - for stdin) as the sidecar-injection webhook would')
    .argument('<file>', 'AdmissionReview JSON, or - for stdin')
    .option('--image <image>', 'sidecar image', 'ghcr.io/optimus/sidecar:latest')
    .option('--broker <url>', 'broker URL the sidecar uses', 'mqtt://optimus-broker:1883')
    .option('--credentials-secret <name>', 'Secret with the broker username and password')
    .option('--classic', 'inject a classic sidecar (clusters older than 1.29)')
    .option('--json', 'accepted for uniformity: the answer is one JSON document on stdout either way')
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
