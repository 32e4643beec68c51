/**
 * Configuration from environment variables (as the admission webhook injects them) with command-line
 * flags as overrides. Every problem is reported with the variable and the flag it came from.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MAX_BATCH_RECORDS } from '../../shared/src/schemas';
import { ROLES, type Role, type TaskId } from '../../shared/src/topics';
import type { VersionChoice } from './mqtt/connection';
import { LOG_FORMATS, type LogFormat } from '../../shared/src/schemas';
import { validateTaskId } from './validate/wire';

export interface SidecarConfig {
  task: TaskId;
  brokerUrl: string;
  username: string | undefined;
  password: string | undefined;
  ca: Buffer | undefined;
  cert: Buffer | undefined;
  key: Buffer | undefined;
  /** A file path, or `-` for standard input. */
  logPath: string;
  batchSize: number | null;
  format: LogFormat;
  stateDir: string | null;
  doneFile: string | null;
  mqttVersion: VersionChoice;
  window: number;
  ratePerSec: number;
  maxPending: number;
  maxLineBytes: number;
  pollMs: number;
  idlePollMs: number;
  quietMs: number;
  keepaliveSec: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Records per MQTT message (wire v2 batches); 1 publishes bare v1 records. */
  batchRecords: number;
  /** Resend what the broker acknowledged but the controller did not confirm after this long. */
  resendAfterMs: number;
  /** At the end of training, how long to wait for the controller's confirmation before exiting. */
  confirmWaitMs: number;
  /** Stop as on SIGTERM when this process is no longer our parent (a local run that was killed). */
  parentPid: number | null;
  debug: boolean;
}

/** One setting: its environment variable, flag and meaning (also the source of `--help`). */
/**
 * Batching delay while lines stream in. Bounds the added latency (the bench's p99 is this plus up to
 * ~15 ms on a 2-core machine: 30 → 31 ms, 40 → 47–56 ms) and sets the wake-up rate that dominates
 * CPU at a steady trickle (ADR 0008 and its 30 ms amendment).
 */
export const QUIET_MS_DEFAULT = 30;

const SETTINGS = {
  namespace: ['OPTIMUS_NAMESPACE', 'Kubernetes namespace of the job (required)'],
  job: ['OPTIMUS_JOB', 'job name (required)'],
  role: ['OPTIMUS_ROLE', 'ps | worker | scheduler (required)'],
  index: ['OPTIMUS_INDEX', 'task index within its role (required)'],
  broker: ['OPTIMUS_BROKER_URL', 'mqtt://host:1883 or mqtts://host:8883 (required)'],
  username: ['OPTIMUS_BROKER_USERNAME', 'MQTT user name'],
  'password-file': ['OPTIMUS_BROKER_PASSWORD_FILE', 'file holding the MQTT password'],
  'ca-file': ['OPTIMUS_BROKER_CA_FILE', 'PEM CA bundle to verify the broker'],
  'cert-file': ['OPTIMUS_BROKER_CERT_FILE', 'PEM client certificate'],
  'key-file': ['OPTIMUS_BROKER_KEY_FILE', 'PEM client key'],
  log: ['OPTIMUS_LOG_PATH', 'training log to follow, or - for stdin (required)'],
  'batch-size': ['OPTIMUS_BATCH_SIZE', 'per-worker mini-batch size (turns samples/s into step time)'],
  format: ['OPTIMUS_LOG_FORMAT', `${LOG_FORMATS.join(' | ')} (default auto)`],
  'state-dir': ['OPTIMUS_STATE_DIR', 'where position and outbox live (default <log dir>/.optimus-sidecar)'],
  'done-file': [
    'OPTIMUS_DONE_FILE',
    'marker the training container creates when it ends (default <log>.done)',
  ],
  'mqtt-version': ['OPTIMUS_MQTT_VERSION', '4 (3.1.1, default) | 5 | auto (5, falling back to 4)'],
  window: ['OPTIMUS_INFLIGHT', 'max unacknowledged messages on the wire (default 32)'],
  rate: ['OPTIMUS_MAX_RATE', 'max messages per second, paces resends (default 500)'],
  'max-pending': ['OPTIMUS_MAX_PENDING', 'unacknowledged records held before reading pauses (default 20000)'],
  'max-line-bytes': ['OPTIMUS_MAX_LINE_BYTES', 'longer lines are cut (default 65536)'],
  'poll-ms': ['OPTIMUS_POLL_MS', 'file polling interval besides fs.watch (default 1000)'],
  'idle-poll-ms': [
    'OPTIMUS_IDLE_POLL_MS',
    'longest polling interval while the log is idle and fs.watch is seen to work (default 30000)',
  ],
  'quiet-ms': [
    'OPTIMUS_QUIET_MS',
    `batching delay while lines stream in, trades latency for CPU (default ${QUIET_MS_DEFAULT})`,
  ],
  keepalive: ['OPTIMUS_KEEPALIVE_SEC', 'MQTT keep-alive seconds (default 30)'],
  'reconnect-min-ms': ['OPTIMUS_RECONNECT_MIN_MS', 'first reconnect delay (default 500)'],
  'reconnect-max-ms': ['OPTIMUS_RECONNECT_MAX_MS', 'longest reconnect delay (default 10000)'],
  'batch-records': [
    'OPTIMUS_BATCH_RECORDS',
    'records per MQTT message, wire v2 (default 64; 1 = one v1 record per message)',
  ],
  'resend-after-ms': [
    'OPTIMUS_RESEND_AFTER_MS',
    'resend records the controller has not confirmed stored after this long (default 15000)',
  ],
  'confirm-wait-sec': [
    'OPTIMUS_CONFIRM_WAIT_SEC',
    "at the end, wait this long for the controller's confirmation before exiting, counted from the last (re)connect (default 120)",
  ],
  'parent-pid': [
    'OPTIMUS_PARENT_PID',
    'stop as on SIGTERM once this process is no longer our parent (local mode; default: none)',
  ],
  debug: ['OPTIMUS_DEBUG', 'set to 1 for debug logs (samples of unparsed lines)'],
} as const;
type Key = keyof typeof SETTINGS;

export class ConfigError extends Error {}

/** The `--help` text. */
export function helpText(): string {
  const rows = Object.entries(SETTINGS).map(
    ([flag, [env, what]]) => `  --${flag.padEnd(17)} ${env.padEnd(30)} ${what}`,
  );
  return `Usage: node sidecar.cjs [flags]   (flags override environment variables)\n\n${rows.join('\n')}\n  --help\n`;
}

/** Builds the configuration; throws {@link ConfigError} naming the variable/flag at fault. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): SidecarConfig | 'help' {
  const options = Object.fromEntries(Object.keys(SETTINGS).map((k) => [k, { type: 'string' as const }]));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean' } },
      strict: true,
    }).values;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  if (values['help'] === true) return 'help';
  const raw = (k: Key): string | undefined => {
    const v = values[k];
    const s = typeof v === 'string' ? v : env[SETTINGS[k][0]];
    return s === undefined || s.trim() === '' ? undefined : s.trim();
  };
  const name = (k: Key): string => `${SETTINGS[k][0]} (--${k})`;
  const required = (k: Key): string => {
    const v = raw(k);
    if (v === undefined) throw new ConfigError(`${name(k)} is required: ${SETTINGS[k][1]}`);
    return v;
  };
  const int = (k: Key, dflt: number | null, min: number): number | null => {
    const v = raw(k);
    if (v === undefined) return dflt;
    if (!/^\d{1,15}$/.test(v) || Number(v) < min)
      throw new ConfigError(`${name(k)} must be an integer ≥ ${min}, got "${v}"`);
    return Number(v);
  };
  const file = (k: Key): Buffer | undefined => {
    const p = raw(k);
    if (p === undefined) return undefined;
    try {
      return fs.readFileSync(p);
    } catch (err) {
      throw new ConfigError(
        `${name(k)}: cannot read ${p}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
  };
  const task = readTask(required, int, name);
  const logPath = required('log');
  const format = raw('format') ?? 'auto';
  if (!(LOG_FORMATS as readonly string[]).includes(format)) {
    throw new ConfigError(`${name('format')} must be one of ${LOG_FORMATS.join(', ')}, got "${format}"`);
  }
  const version = raw('mqtt-version') ?? '4';
  if (version !== '4' && version !== '5' && version !== 'auto') {
    throw new ConfigError(`${name('mqtt-version')} must be 4, 5 or auto, got "${version}"`);
  }
  const stdin = logPath === '-';
  const password = file('password-file')
    ?.toString('utf8')
    .replace(/\r?\n$/, '');
  const brokerUrl = required('broker');
  if (!/^(mqtts?|tcp|ssl|tls):\/\/[^/]+/.test(brokerUrl)) {
    throw new ConfigError(
      `${name('broker')} must look like mqtt://host:1883 or mqtts://host:8883, got "${brokerUrl}"`,
    );
  }
  return {
    task,
    brokerUrl,
    username: raw('username'),
    password,
    ca: file('ca-file'),
    cert: file('cert-file'),
    key: file('key-file'),
    logPath,
    batchSize: int('batch-size', null, 1),
    format: format as LogFormat,
    stateDir:
      raw('state-dir') ?? (stdin ? null : path.join(path.dirname(path.resolve(logPath)), '.optimus-sidecar')),
    doneFile: raw('done-file') ?? (stdin ? null : `${logPath}.done`),
    mqttVersion: version === 'auto' ? 'auto' : version === '5' ? 5 : 4,
    window: int('window', 32, 1) as number,
    ratePerSec: int('rate', 500, 1) as number,
    maxPending: int('max-pending', 20_000, 1) as number,
    maxLineBytes: int('max-line-bytes', 65_536, 256) as number,
    pollMs: int('poll-ms', 1000, 10) as number,
    idlePollMs: int('idle-poll-ms', 30_000, 10) as number,
    quietMs: int('quiet-ms', QUIET_MS_DEFAULT, 0) as number,
    keepaliveSec: int('keepalive', 30, 1) as number,
    reconnectMinMs: int('reconnect-min-ms', 500, 1) as number,
    reconnectMaxMs: int('reconnect-max-ms', 10_000, 1) as number,
    batchRecords: Math.min(MAX_BATCH_RECORDS, int('batch-records', 64, 1) as number),
    resendAfterMs: int('resend-after-ms', 15_000, 100) as number,
    confirmWaitMs: (int('confirm-wait-sec', 120, 0) as number) * 1000,
    parentPid: int('parent-pid', null, 1),
    debug: raw('debug') === '1' || raw('debug') === 'true',
  };
}

function readTask(
  required: (k: Key) => string,
  int: (k: Key, d: number | null, min: number) => number | null,
  name: (k: Key) => string,
): TaskId {
  const role = required('role');
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new ConfigError(`${name('role')} must be ${ROLES.join(', ')}, got "${role}"`);
  }
  required('index');
  const task: TaskId = {
    namespace: required('namespace'),
    job: required('job'),
    role: role as Role,
    index: int('index', 0, 0) as number,
  };
  const problem = validateTaskId(task);
  if (problem !== null) {
    const key = /^\$\.(\w+)/.exec(problem)?.[1] ?? 'namespace';
    const field = (['namespace', 'job', 'role', 'index'] as const).find((k) => k === key) ?? 'namespace';
    const reason = problem.replace(/^\$\.\w+:\s*/, '');
    throw new ConfigError(`${name(field)} is not valid (${reason}): "${String(task[field])}"`);
  }
  return task;
}
