/**
 * `optimus local` as the real controller process (no tsx wrapper between us and it, so `kill -9`
 * hits the controller), plus what the fault tests read back: the records it stored and its metrics.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, type Child } from './children';

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
    { cwd: REPO, env: { ...process.env, OPTIMUS_LOG_LEVEL: 'warn', ...env } },
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
  const text = await (await fetch(`${api}/metrics`)).text();
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
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`submit: ${res.status} ${await res.text()}`);
}
