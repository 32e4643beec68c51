/**
 * The controller's configuration: the environment-variable contract of
 * `docs/controller-config.md`, validated with zod. Every variable also has a command-line flag
 * ({@link SETTINGS}); a flag wins over the variable. A malformed value stops the process with an
 * error naming the flag or variable it came from.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PRE_RUN_DEFAULTS } from '../runtime/pre-run';

const boolText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(0).max(65_535);
const positiveSeconds = z.coerce.number().finite().positive();
const nonNegativeSeconds = z.coerce.number().finite().min(0);
const brokerUrl = z
  .string()
  .regex(/^(mqtts?|wss?|tcp):\/\/.+/, 'must be an mqtt://, mqtts://, ws:// or wss:// URL');
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Schema of the environment: keys are the variable names so zod's issue path names the variable. */
const envSchema = z.object({
  OPTIMUS_BROKER_URL: brokerUrl.optional(),
  OPTIMUS_BROKER_USERNAME: z.string().min(1).optional(),
  OPTIMUS_BROKER_PASSWORD_FILE: z.string().min(1).optional(),
  OPTIMUS_BROKER_CA_FILE: z.string().min(1).optional(),
  OPTIMUS_BROKER_CLIENT_ID: z.string().min(1).max(128).default('optimus-controller'),
  OPTIMUS_BROKER_IDENTITIES: z.enum(['none', 'dynsec']).default('none'),
  OPTIMUS_BROKER_PROBE_JOB: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be <namespace>/<job>')
    .optional(),
  OPTIMUS_HTTP_PORT: port.default(8080),
  OPTIMUS_WEBHOOK_PORT: port.default(8443),
  OPTIMUS_WEBHOOK_CERT_FILE: z.string().min(1).default('/tls/tls.crt'),
  OPTIMUS_WEBHOOK_KEY_FILE: z.string().min(1).default('/tls/tls.key'),
  OPTIMUS_API_TOKEN_FILE: z.string().min(1).optional(),
  OPTIMUS_API_INSECURE_NO_TOKEN: boolText.default(false),
  OPTIMUS_METRICS_OPEN: boolText.default(false),
  OPTIMUS_HTTP_HOST: z.string().min(1).optional(),
  OPTIMUS_HTTP_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(\.?[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?|\[[0-9a-f:.]+\](:\d{1,5})?)$/i,
            'must be host names, name:port or .suffix entries, comma-separated',
          ),
      ),
    ),
  OPTIMUS_POLICY: z.string().min(1).default('optimus'),
  OPTIMUS_SCHEDULING_INTERVAL_SEC: positiveSeconds.default(600),
  OPTIMUS_RESTART_COST_SEC: nonNegativeSeconds.default(60),
  OPTIMUS_PRE_RUN_BUDGET: z.coerce.number().int().min(0).max(8).default(PRE_RUN_DEFAULTS.budget),
  OPTIMUS_LEADER_ELECTION: boolText.default(true),
  OPTIMUS_LEASE_NAME: z.string().min(1).default('optimus-controller'),
  POD_NAME: z.string().min(1).optional(),
  POD_NAMESPACE: z.string().min(1).optional(),
  OPTIMUS_SIDECAR_IMAGE: z.string().min(1).optional(),
  OPTIMUS_SIDECAR_RESOURCES: z
    .string()
    .default('{"requests":{"cpu":"10m","memory":"48Mi"},"limits":{"memory":"96Mi"}}')
    .transform((s, ctx) => {
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), z.record(z.string(), z.string()))),
  OPTIMUS_SIDECAR_BROKER_URL: brokerUrl.optional(),
  OPTIMUS_SIDECAR_CREDENTIALS_SECRET: z.string().min(1).optional(),
  OPTIMUS_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  OPTIMUS_WATCH_NAMESPACES: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    )
    .pipe(
      z.array(
        z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be namespace names, comma-separated'),
      ),
    ),
  OPTIMUS_CREDENTIALS_SOURCE: z.string().min(1).optional(),
  OPTIMUS_NAMESPACE_SELECTOR: z
    .string()
    .regex(
      /^([a-z0-9A-Z]([-a-zA-Z0-9_./]*[a-zA-Z0-9])?=[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?)(,[a-z0-9A-Z]([-a-zA-Z0-9_./]*[a-zA-Z0-9])?=[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?)*$/,
      'must be key=value labels, comma-separated (all must match)',
    )
    .optional(),
  OPTIMUS_POD_SECURITY_ALLOW: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
});

/**
 * Every setting: its environment variable and its `optimus kubernetes run` flag (same value, flag
 * wins). docs/controller-config.md documents this table; a test keeps the two equal.
 */
export const SETTINGS = {
  OPTIMUS_BROKER_URL: ['--broker-url', 'MQTT broker URL (mqtt://, mqtts://, ws://, wss://)'],
  OPTIMUS_BROKER_USERNAME: ['--broker-username', 'broker user name'],
  OPTIMUS_BROKER_PASSWORD_FILE: ['--broker-password-file', 'file holding the broker password'],
  OPTIMUS_BROKER_CA_FILE: ['--broker-ca-file', 'CA bundle for mqtts://'],
  OPTIMUS_BROKER_CLIENT_ID: [
    '--broker-client-id',
    'MQTT client id, the same for every replica (default optimus-controller)',
  ],
  OPTIMUS_BROKER_IDENTITIES: [
    '--broker-identities',
    'none, or dynsec: per-task broker identities and a Secret per job (default none)',
  ],
  OPTIMUS_BROKER_PROBE_JOB: [
    '--broker-probe-job',
    '<namespace>/<job> that gets broker identities without being a job (helm test)',
  ],
  OPTIMUS_HTTP_PORT: ['--http-port', 'HTTP API, /healthz, /readyz, /metrics (default 8080)'],
  OPTIMUS_WEBHOOK_PORT: ['--webhook-port', 'HTTPS port of the sidecar-injection webhook (default 8443)'],
  OPTIMUS_WEBHOOK_CERT_FILE: ['--webhook-cert-file', 'webhook TLS certificate (default /tls/tls.crt)'],
  OPTIMUS_WEBHOOK_KEY_FILE: ['--webhook-key-file', 'webhook TLS key (default /tls/tls.key)'],
  OPTIMUS_API_TOKEN_FILE: [
    '--api-token-file',
    'bearer token every API route but /healthz and /readyz needs (required in Kubernetes mode)',
  ],
  OPTIMUS_API_INSECURE_NO_TOKEN: [
    '--api-insecure-no-token',
    'true: run the Kubernetes API without a token, open to every pod that reaches it (default false)',
  ],
  OPTIMUS_METRICS_OPEN: [
    '--metrics-open',
    'true: serve /metrics without the token, for a Prometheus that has none (default false)',
  ],
  OPTIMUS_HTTP_HOST: [
    '--http-host',
    'address the HTTP API listens on (default 0.0.0.0 in Kubernetes; local mode: --host)',
  ],
  OPTIMUS_HTTP_ALLOWED_HOSTS: [
    '--http-allowed-hosts',
    'Host names the API answers to besides IP literals and localhost: name, name:port or .suffix, comma-separated',
  ],
  OPTIMUS_POLICY: ['--policy', 'policy name from the registry (default optimus)'],
  OPTIMUS_SCHEDULING_INTERVAL_SEC: [
    '--scheduling-interval-sec',
    'seconds between scheduling rounds (default 600)',
  ],
  OPTIMUS_PRE_RUN_BUDGET: [
    '--pre-run-budget',
    `sample shapes each new job runs before its first decision, 0-8 (default ${PRE_RUN_DEFAULTS.budget})`,
  ],
  OPTIMUS_RESTART_COST_SEC: [
    '--restart-cost-sec',
    'assumed checkpoint → restart cost of a resize (default 60)',
  ],
  OPTIMUS_LEADER_ELECTION: ['--leader-election', 'elect a leader on a Lease: true or false (default true)'],
  OPTIMUS_LEASE_NAME: ['--lease-name', 'the Lease (in POD_NAMESPACE; default optimus-controller)'],
  POD_NAME: ['--pod-name', "this replica's identity (downward API)"],
  POD_NAMESPACE: ['--pod-namespace', 'home namespace: the Lease and the credentials Secret live there'],
  OPTIMUS_SIDECAR_IMAGE: ['--sidecar-image', 'image the webhook injects (no webhook without it)'],
  OPTIMUS_SIDECAR_RESOURCES: ['--sidecar-resources', 'JSON resources of the injected sidecar'],
  OPTIMUS_SIDECAR_BROKER_URL: [
    '--sidecar-broker-url',
    'broker URL the injected sidecars use (default: the broker URL)',
  ],
  OPTIMUS_SIDECAR_CREDENTIALS_SECRET: [
    '--sidecar-credentials-secret',
    'Secret (keys username, password) mounted into injected sidecars',
  ],
  OPTIMUS_CREDENTIALS_SOURCE: [
    '--credentials-source',
    'copy this Secret of POD_NAMESPACE into every job namespace as the sidecar credentials Secret',
  ],
  OPTIMUS_WATCH_NAMESPACES: [
    '--watch-namespaces',
    'comma-separated namespaces whose OptimusJobs run (with the selector: also these; neither: all)',
  ],
  OPTIMUS_NAMESPACE_SELECTOR: [
    '--namespace-selector',
    'jobs run in namespaces with these labels (key=value,…), besides --watch-namespaces',
  ],
  OPTIMUS_POD_SECURITY_ALLOW: [
    '--pod-security-allow',
    'pod security checks a cluster admin allows (check, or namespace:check; comma-separated)',
  ],
  OPTIMUS_LOG_LEVEL: ['--log-level', `pino log level: ${LOG_LEVELS.join(', ')} (default info)`],
} as const satisfies Record<keyof z.input<typeof envSchema>, readonly [string, string]>;
export type SettingVariable = keyof typeof SETTINGS;

export type LogLevel = (typeof LOG_LEVELS)[number];

/** The validated configuration, in the names the code uses. */
export interface ControllerConfig {
  readonly brokerUrl: string | undefined;
  readonly brokerUsername: string | undefined;
  readonly brokerPasswordFile: string | undefined;
  readonly brokerCaFile: string | undefined;
  /** One MQTT client id for every replica: the leader takes over the persistent session (and its queue). */
  readonly brokerClientId: string;
  /** `dynsec`: the controller administers Mosquitto's dynamic security and gives each job its identities. */
  readonly brokerIdentities: 'none' | 'dynsec';
  /** `<namespace>/<job>` given a broker identity without being a job (for `helm test`). */
  readonly brokerProbeJob: string | undefined;
  readonly httpPort: number;
  readonly webhookPort: number;
  readonly webhookCertFile: string;
  readonly webhookKeyFile: string;
  readonly apiTokenFile: string | undefined;
  /** Explicitly run the Kubernetes API without a token (refused otherwise). */
  readonly apiInsecureNoToken: boolean;
  /** `/metrics` without the token. */
  readonly metricsOpen: boolean;
  /** Listen address of the HTTP API (Kubernetes default 0.0.0.0). */
  readonly httpHost: string | undefined;
  /** Host names the API answers to besides IP literals and localhost (DNS-rebinding check). */
  readonly httpAllowedHosts: readonly string[];
  readonly policy: string;
  readonly schedulingIntervalSec: number;
  readonly restartCostSec: number;
  /** Sample shapes of each new job's pre-run (0: none). */
  readonly preRunBudget: number;
  readonly leaderElection: boolean;
  readonly leaseName: string;
  readonly podName: string | undefined;
  readonly podNamespace: string | undefined;
  readonly sidecarImage: string | undefined;
  readonly sidecarResources: Record<string, Record<string, string>>;
  readonly sidecarBrokerUrl: string | undefined;
  readonly sidecarCredentialsSecret: string | undefined;
  readonly logLevel: LogLevel;
  /** Namespaces whose OptimusJobs this controller runs; empty = every namespace. */
  readonly watchNamespaces: readonly string[];
  /** Secret of the home namespace copied into job namespaces as `sidecarCredentialsSecret`. */
  readonly credentialsSource: string | undefined;
  /** Namespaces with all these labels run jobs too (`key=value,…`); neither this nor a list: all. */
  readonly namespaceSelector: string | undefined;
  /** Pod security checks allowed (`check` or `namespace:check`); see `k8s/api/pod-security.ts`. */
  readonly podSecurityAllow: readonly string[];
}

/** Thrown for a bad configuration value; the message names the variable (or flag). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads the configuration from `env`, then applies `overrides` (from command-line flags).
 *
 * @example
 * const cfg = loadConfig(process.env, { httpPort: 0 });
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<ControllerConfig> = {},
  /** Raw flag values by variable (`{ OPTIMUS_POLICY: 'drf' }` from `--policy drf`): they win over `env`. */
  flags: Readonly<Partial<Record<SettingVariable, string>>> = {},
): ControllerConfig {
  // Empty strings count as unset: Helm renders absent values as "".
  const set = (o: Readonly<Record<string, string | undefined>>) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== ''));
  const fromFlags = set(flags);
  const present = { ...set(env), ...fromFlags };
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // The variable is the first path element; a nested path (inside a JSON value) says where.
    const variable = String(issue?.path[0] ?? 'environment');
    const inner = issue?.path.slice(1).join('.');
    const flag = (SETTINGS as Record<string, readonly [string, string] | undefined>)[variable]?.[0];
    const name =
      variable in fromFlags && flag ? `${flag} (${variable})` : flag ? `${variable} (${flag})` : variable;
    throw new ConfigError(
      `${name}${inner ? ` at ${inner}` : ''}: ${issue?.message ?? 'invalid'} (got "${String(present[variable] ?? '')}")`,
    );
  }
  const e = parsed.data;
  const base: ControllerConfig = {
    brokerUrl: e.OPTIMUS_BROKER_URL,
    brokerUsername: e.OPTIMUS_BROKER_USERNAME,
    brokerPasswordFile: e.OPTIMUS_BROKER_PASSWORD_FILE,
    brokerCaFile: e.OPTIMUS_BROKER_CA_FILE,
    brokerClientId: e.OPTIMUS_BROKER_CLIENT_ID,
    brokerIdentities: e.OPTIMUS_BROKER_IDENTITIES,
    brokerProbeJob: e.OPTIMUS_BROKER_PROBE_JOB,
    httpPort: e.OPTIMUS_HTTP_PORT,
    webhookPort: e.OPTIMUS_WEBHOOK_PORT,
    webhookCertFile: e.OPTIMUS_WEBHOOK_CERT_FILE,
    webhookKeyFile: e.OPTIMUS_WEBHOOK_KEY_FILE,
    apiTokenFile: e.OPTIMUS_API_TOKEN_FILE,
    apiInsecureNoToken: e.OPTIMUS_API_INSECURE_NO_TOKEN,
    metricsOpen: e.OPTIMUS_METRICS_OPEN,
    httpHost: e.OPTIMUS_HTTP_HOST,
    httpAllowedHosts: e.OPTIMUS_HTTP_ALLOWED_HOSTS,
    policy: e.OPTIMUS_POLICY,
    schedulingIntervalSec: e.OPTIMUS_SCHEDULING_INTERVAL_SEC,
    restartCostSec: e.OPTIMUS_RESTART_COST_SEC,
    preRunBudget: e.OPTIMUS_PRE_RUN_BUDGET,
    leaderElection: e.OPTIMUS_LEADER_ELECTION,
    leaseName: e.OPTIMUS_LEASE_NAME,
    podName: e.POD_NAME,
    podNamespace: e.POD_NAMESPACE,
    sidecarImage: e.OPTIMUS_SIDECAR_IMAGE,
    sidecarResources: e.OPTIMUS_SIDECAR_RESOURCES,
    sidecarBrokerUrl: e.OPTIMUS_SIDECAR_BROKER_URL ?? e.OPTIMUS_BROKER_URL,
    sidecarCredentialsSecret: e.OPTIMUS_SIDECAR_CREDENTIALS_SECRET,
    logLevel: e.OPTIMUS_LOG_LEVEL,
    watchNamespaces: e.OPTIMUS_WATCH_NAMESPACES,
    credentialsSource: e.OPTIMUS_CREDENTIALS_SOURCE,
    namespaceSelector: e.OPTIMUS_NAMESPACE_SELECTOR,
    podSecurityAllow: e.OPTIMUS_POD_SECURITY_ALLOW,
  };
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return { ...base, ...defined };
}

/** Reads a secret file (token, password), trimmed; the error names the variable. */
export function readSecretFile(path: string, variable: string): string {
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (text === '') throw new ConfigError(`${variable}: file ${path} is empty`);
    return text;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${variable}: cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * Kubernetes mode refuses to start an API without a token (issue 28): every pod that reaches the
 * Service could otherwise read every job and delete any. Null when the configuration is acceptable.
 */
export function apiTokenProblem(
  cfg: Pick<ControllerConfig, 'apiTokenFile' | 'apiInsecureNoToken'>,
): string | null {
  if (cfg.apiTokenFile !== undefined || cfg.apiInsecureNoToken) return null;
  return (
    'OPTIMUS_API_TOKEN_FILE (--api-token-file) is required in Kubernetes mode: every API route but ' +
    '/healthz and /readyz needs the token. Set OPTIMUS_API_INSECURE_NO_TOKEN=true to run an open API (not recommended)'
  );
}
