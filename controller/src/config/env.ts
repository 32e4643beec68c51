/**
 * The controller's configuration: the environment-variable contract of
 * `docs/controller-config.md`, validated with zod, with command-line overrides on top.
 * A malformed value stops the process with an error naming the variable.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

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
  OPTIMUS_POLICY: z.string().min(1).default('optimus'),
  OPTIMUS_SCHEDULING_INTERVAL_SEC: positiveSeconds.default(600),
  OPTIMUS_RESTART_COST_SEC: nonNegativeSeconds.default(60),
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
});

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
  readonly policy: string;
  readonly schedulingIntervalSec: number;
  readonly restartCostSec: number;
  readonly leaderElection: boolean;
  readonly leaseName: string;
  readonly podName: string | undefined;
  readonly podNamespace: string | undefined;
  readonly sidecarImage: string | undefined;
  readonly sidecarResources: Record<string, Record<string, string>>;
  readonly sidecarBrokerUrl: string | undefined;
  readonly sidecarCredentialsSecret: string | undefined;
  readonly logLevel: LogLevel;
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
): ControllerConfig {
  // Empty strings count as unset: Helm renders absent values as "".
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // The variable is the first path element; a nested path (inside a JSON value) says where.
    const variable = String(issue?.path[0] ?? 'environment');
    const name = issue?.path.join('.') ?? variable;
    throw new ConfigError(`${name}: ${issue?.message ?? 'invalid'} (got "${String(env[variable] ?? '')}")`);
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
    policy: e.OPTIMUS_POLICY,
    schedulingIntervalSec: e.OPTIMUS_SCHEDULING_INTERVAL_SEC,
    restartCostSec: e.OPTIMUS_RESTART_COST_SEC,
    leaderElection: e.OPTIMUS_LEADER_ELECTION,
    leaseName: e.OPTIMUS_LEASE_NAME,
    podName: e.POD_NAME,
    podNamespace: e.POD_NAMESPACE,
    sidecarImage: e.OPTIMUS_SIDECAR_IMAGE,
    sidecarResources: e.OPTIMUS_SIDECAR_RESOURCES,
    sidecarBrokerUrl: e.OPTIMUS_SIDECAR_BROKER_URL ?? e.OPTIMUS_BROKER_URL,
    sidecarCredentialsSecret: e.OPTIMUS_SIDECAR_CREDENTIALS_SECRET,
    logLevel: e.OPTIMUS_LOG_LEVEL,
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
