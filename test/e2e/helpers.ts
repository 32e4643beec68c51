/** Helpers of the end-to-end tests: retained-topic snapshots, polling, a CLI child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { decodePayload } from '../../shared/src/decode';
import { jobPlanSchema, type JobPlan } from '../../shared/src/schemas';
import { PLAN_FILTER, parseTopic } from '../../shared/src/topics';

export const REPO = new URL('../..', import.meta.url).pathname;

/** Every retained `plan` message on the broker, keyed `namespace/job`. */
export async function retainedPlans(
  url: string,
  /** The embedded broker refuses anonymous clients: its read-only observer identity. */
  observer: { username: string; password: string } | null,
): Promise<Map<string, JobPlan>> {
  const client = await mqtt.connectAsync(url, {
    ...observer,
    clientId: `optimus-observer-e2e-${Math.random().toString(16).slice(2)}`,
    reconnectPeriod: 0,
  });
  const out = new Map<string, JobPlan>();
  const bad: string[] = [];
  client.on('message', (topic, payload, packet) => {
    const t = parseTopic(topic);
    if (!packet.retain || t?.kind !== 'plan' || payload.length === 0) return;
    // The one decoder of the wire, as every reader: a plan that does not parse fails the test.
    const plan = decodePayload(jobPlanSchema, payload);
    if (plan.ok) out.set(`${t.job.namespace}/${t.job.job}`, plan.value);
    else bad.push(`${topic}: ${plan.detail}`);
  });
  await client.subscribeAsync(PLAN_FILTER, { qos: 1 });
  await sleep(300);
  await client.endAsync();
  if (bad.length > 0) throw new Error(`retained plans that do not decode: ${bad.join('; ')}`);
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Runs `optimus local` as its own process (no tsx wrapper process, so a kill hits the controller). */
export function runCli(args: readonly string[]): {
  child: ChildProcess;
  stdout: Promise<string>;
  stderr: () => string;
  exit: Promise<number>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'controller/src/cli/main.ts', 'local', ...args], {
    cwd: REPO,
    env: { ...process.env, OPTIMUS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exit = new Promise<number>((r) => child.once('exit', (code) => r(code ?? -1)));
  return { child, exit, stdout: exit.then(() => out), stderr: () => err };
}

/** Processes of a local run: their command line or environment names its state directory. */
export function processesOf(dir: string, o: { exceptBroker?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (!cmd.includes(dir) && !env.includes(dir)) continue;
      if (o.exceptBroker && cmd.includes('broker.mjs')) continue;
      if (/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) continue; // exited, not reaped yet
      out.push(`${pid} ${cmd.slice(0, 120)}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/** Waits until no process of `dir` is left; the error names those that are (each points at a different watcher). */
export async function nothingLeft(dir: string, o?: { exceptBroker?: boolean; ms?: number }): Promise<void> {
  try {
    await until(`no process of ${dir} left`, () => processesOf(dir, o).length === 0, o?.ms ?? 30_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${processesOf(dir, o).join('; ')}`);
  }
}

/** True while a process runs (not a zombie). */
export function isRunning(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
