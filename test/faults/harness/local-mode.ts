/**
 * `optimus local` as the real controller process (no tsx wrapper between us and it, so `kill -9`
 * hits the controller), plus what the fault tests read back: the records it stored and its metrics.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passwordOf, readKey } from '../../../controller/src/local/broker-credentials';
import { OBSERVER_USERNAME } from '../../../controller/src/local/broker-acl';
import { taskClientId, type TaskId } from '../../../shared/src/topics';
import { start, type Child } from './children';

/**
 * Every controller the fault tests start serves its API with this token (OPTIMUS_API_TOKEN_FILE),
 * so it stays the same across the restarts the tests cause.
 */
export const FAULT_API_TOKEN = 'fault-tests-api-token-0123456789';
const TOKEN_FILE = join(tmpdir(), `optimus-fault-api-token-${process.pid}`);
export const authHeader = { authorization: `Bearer ${FAULT_API_TOKEN}` };

/** Broker credentials derived from the run's key (`<state>/broker-access/key`), as the controller derives them. */
function credentialsOf(stateDir: string, username: string): { username: string; password: string } {
  return { username, password: passwordOf(readKey(join(stateDir, 'broker-access', 'key')), username) };
}

/** The embedded broker's read-only identity (it refuses anonymous clients, ADR 0031). */
export function observerAuth(stateDir: string): { username: string; password: string; clientId: string } {
  const clientId = `${OBSERVER_USERNAME}-${Math.random().toString(16).slice(2)}`;
  return { ...credentialsOf(stateDir, OBSERVER_USERNAME), clientId };
}

/** A task's identity on the embedded broker: the client id must be its user name. */
export function taskAuth(stateDir: string, task: TaskId): { username: string; password: string } {
  return credentialsOf(stateDir, taskClientId(task));
}

export const REPO = new URL('../../..', import.meta.url).pathname;

export interface LocalController {
  readonly child: Child;
  /** API base URL, once it listens. */
  api(): Promise<string>;
  /** The broker it uses (embedded or given). */
  broker(): Promise<string>;
}

export function startLocal(
  stateDir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): LocalController {
  writeFileSync(TOKEN_FILE, FAULT_API_TOKEN, { mode: 0o600 });
  const child = start(
    process.execPath,
    [
      '--import',
      'tsx',
      'controller/src/cli/main.ts',
      'local',
      '--state-dir',
      stateDir,
      '--port',
      '0',
      ...args,
    ],
    {
      cwd: REPO,
      env: { ...process.env, OPTIMUS_LOG_LEVEL: 'warn', OPTIMUS_API_TOKEN_FILE: TOKEN_FILE, ...env },
    },
  );
  // The CLI's second line: `  API http://host:port/api/v1/jobs · metrics … · broker mqtt://…`.
  const ready = child.waitFor(/API (http:\/\/[^\s]+)\/api\/v1\/jobs .* broker (mqtt:\/\/\S+)/, 90_000);
  ready.catch(() => undefined); // reported to whoever asks for the API or the broker
  return {
    child,
    api: async () => (await ready)[1] as string,
    broker: async () => (await ready)[2] as string,
  };
}

/** SIGKILLs every process of a local-mode state directory (they carry its marker in their environment). */
export function killLocalProcesses(stateDir: string): number {
  const marker = `optimus-local:${stateDir}`;
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').includes(marker)) continue;
      process.kill(Number(pid), 'SIGKILL');
      n++;
    } catch {
      // gone, or not ours to read
    }
  }
  return n;
}

export interface StoredRecordLine {
  task: { namespace: string; job: string; role: string; index: number };
  record: { seq: number; batch: number | null; kind: string } & Record<string, unknown>;
}

/** The controller's record log (`store/records.jsonl`): task key → seq → the record as stored. */
export function storedRecords(stateDir: string): Map<string, Map<number, StoredRecordLine['record']>> {
  const out = new Map<string, Map<number, StoredRecordLine['record']>>();
  const file = join(stateDir, 'store', 'records.jsonl');
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    let r: StoredRecordLine;
    try {
      r = JSON.parse(line) as StoredRecordLine;
    } catch {
      continue; // a torn last line of a killed controller (never acted on)
    }
    const key = `${r.task.namespace}/${r.task.job}/${r.task.role}/${r.task.index}`;
    const seqs = out.get(key) ?? new Map<number, StoredRecordLine['record']>();
    if (seqs.has(r.record.seq)) throw new Error(`the store holds ${key} seq ${r.record.seq} twice`);
    seqs.set(r.record.seq, r.record);
    out.set(key, seqs);
  }
  return out;
}

/** One Prometheus sample (`name{labels}`), summed over series that match the given labels. */
export async function metric(
  api: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${api}/metrics`, { headers: authHeader })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const l = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/** Submits a job over the API (local mode accepts submissions). */
export async function submit(api: string, spec: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${api}/api/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeader },
    body: JSON.stringify(spec),
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`submit: ${res.status} ${await res.text()}`);
}
