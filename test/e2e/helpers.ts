/** Helpers of the end-to-end tests: retained-topic snapshots, polling, a CLI child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import mqtt from 'mqtt';
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
  client.on('message', (topic, payload, packet) => {
    const t = parseTopic(topic);
    if (!packet.retain || t?.kind !== 'plan' || payload.length === 0) return;
    out.set(`${t.job.namespace}/${t.job.job}`, jobPlanSchema.parse(JSON.parse(payload.toString())));
  });
  await client.subscribeAsync(PLAN_FILTER, { qos: 1 });
  await sleep(300);
  await client.endAsync();
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
