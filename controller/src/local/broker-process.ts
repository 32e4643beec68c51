/**
 * Starts (or, after a controller crash, reuses) the embedded broker process of a state directory,
 * and supervises it: a broker that dies is started again on the same port, so sidecars and the
 * controller reconnect to the URL they know. The bundle is built with esbuild once per start.
 *
 * aedes keeps its state in memory, so a restarted broker has lost the queued messages and retained
 * topics; end-to-end acknowledgement (ADR 0012) makes that survivable: sidecars resend what the
 * controller has not confirmed, and the controller publishes its status and plans again.
 */
import { build } from 'esbuild';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalBrokerCredentials } from './broker-credentials';
import { isAlive, isOurs, spawnNode, type Spawned } from './processes';

const here = dirname(fileURLToPath(import.meta.url));
const SUPERVISE_MS = 250;
const START_TIMEOUT_MS = 10_000;
/** How long a stop waits for the broker to close its clients and exit before it is killed. */
const STOP_GRACE_MS = 3000;

export interface BrokerProcess {
  readonly url: string;
  /** True when a broker left by an earlier controller was reused. */
  readonly reused: boolean;
  /** Times the broker died and was started again. */
  readonly restarts: number;
  /** SIGTERM, then SIGKILL after a few seconds; resolves once it has exited. */
  stop(): Promise<void>;
  /** SIGKILL now, synchronously (a forced stop); true if a broker was running. */
  kill(): boolean;
}

export interface BrokerProcessOptions {
  readonly dir: string;
  readonly marker: string;
  /** The broker's key: renewed when a broker is started afresh, kept across reuse and supervised restarts. */
  readonly credentials: LocalBrokerCredentials;
  /** Told after each restart (and each failed attempt) of a broker that died. */
  readonly onRestart?: (e: { restarts: number; error?: unknown }) => void;
}

interface Running {
  readonly pid: number;
  readonly spawned: Spawned | null;
}

export async function ensureBrokerProcess(o: BrokerProcessOptions): Promise<BrokerProcess> {
  const info = join(o.dir, 'broker.json');
  const script = join(o.dir, 'bin', 'broker.mjs');
  const old = readInfo(info);
  let port: number;
  let current: Running;
  let reused = false;
  if (old && ownedBy(old.pid, o.marker) && (await reachable(old.port))) {
    [port, current, reused] = [old.port, { pid: old.pid, spawned: null }, true];
  } else {
    rmSync(info, { force: true });
    await bundle(script);
    // A new broker, a new key: whatever the last run's passwords were, they open nothing now.
    o.credentials.renew();
    const started = await spawnBroker({ ...o, info, script, port: 0 });
    [port, current] = [started.port, started.running];
  }
  let restarts = 0;
  let stopping = false;
  let restarting: Promise<void> | null = null;
  const check = (): void => {
    if (stopping || restarting || isAlive(current.pid)) return;
    restarting = (async () => {
      if (!existsSync(script)) await bundle(script);
      const started = await spawnBroker({ ...o, info, script, port });
      current = started.running;
      restarts += 1;
      o.onRestart?.({ restarts });
    })()
      .catch((error: unknown) => o.onRestart?.({ restarts, error }))
      .finally(() => (restarting = null));
  };
  const timer = setInterval(check, SUPERVISE_MS);
  timer.unref();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    reused,
    get restarts() {
      return restarts;
    },
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      await restarting;
      await stopBroker(current);
      rmSync(info, { force: true });
    },
    kill: () => {
      stopping = true;
      clearInterval(timer);
      const alive = isAlive(current.pid);
      if (alive) signalPid(current.pid, 'SIGKILL');
      rmSync(info, { force: true });
      return alive;
    },
  };
}

/**
 * SIGKILLs the broker a state directory's `broker.json` names, if it carries `marker`: the last
 * resort of a controller that exits without having stopped it. Synchronous; true if one was killed.
 */
export function killRecordedBroker(dir: string, marker: string): boolean {
  const old = readInfo(join(dir, 'broker.json'));
  if (!old || !isOurs(old.pid, marker)) return false;
  signalPid(old.pid, 'SIGKILL');
  return true;
}

function signalPid(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

async function bundle(script: string): Promise<void> {
  // aedes' dependencies are CommonJS: an ESM bundle needs a `require` (esbuild's documented banner).
  const banner =
    "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";
  await build({
    entryPoints: [join(here, 'broker-main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile: script,
    logLevel: 'silent',
    banner: { js: banner },
  });
}

async function spawnBroker(o: {
  dir: string;
  marker: string;
  credentials: LocalBrokerCredentials;
  info: string;
  script: string;
  port: number;
}): Promise<{ port: number; running: Running }> {
  rmSync(o.info, { force: true });
  const p = spawnNode({
    script: o.script,
    args: [o.info],
    env: {
      ...process.env,
      OPTIMUS_LOCAL_MARKER: o.marker,
      OPTIMUS_BROKER_PORT: String(o.port),
      OPTIMUS_BROKER_KEY_FILE: o.credentials.keyFile,
    },
    stderrFile: join(o.dir, 'broker.stderr.log'),
  });
  // The broker must outlive a crashed controller: the event loop does not wait for it.
  p.child.unref();
  const deadline = Date.now() + START_TIMEOUT_MS;
  let started = readInfo(o.info);
  while (!started || started.pid !== p.child.pid) {
    if (Date.now() > deadline || p.child.exitCode !== null)
      throw new Error(`the embedded broker did not start (see ${join(o.dir, 'broker.stderr.log')})`);
    await new Promise((r) => setTimeout(r, 50));
    started = readInfo(o.info);
  }
  return { port: started.port, running: { pid: started.pid, spawned: p } };
}

async function stopBroker(r: Running): Promise<void> {
  // Unref'd at start so a crash leaves it running; ref'd again so we really wait for it here.
  r.spawned?.child.ref();
  signalPid(r.pid, 'SIGTERM');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (isAlive(r.pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
  if (isAlive(r.pid)) signalPid(r.pid, 'SIGKILL');
  await r.spawned?.exited;
}

function readInfo(file: string): { port: number; pid: number } | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { port: number; pid: number };
  } catch {
    return null;
  }
}

function ownedBy(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(marker);
  } catch {
    return false;
  }
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
