/**
 * Starts (or, after a controller crash, reuses) the embedded broker process of a state
 * directory. The bundle is built with esbuild once per start, like the trainer's.
 */
import { build } from 'esbuild';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode } from './processes';

const here = dirname(fileURLToPath(import.meta.url));

export interface BrokerProcess {
  readonly url: string;
  /** True when a broker left by an earlier controller was reused. */
  readonly reused: boolean;
  stop(): Promise<void>;
}

export async function ensureBrokerProcess(o: { dir: string; marker: string }): Promise<BrokerProcess> {
  const info = join(o.dir, 'broker.json');
  const old = readInfo(info);
  if (old && ownedBy(old.pid, o.marker) && (await reachable(old.port))) {
    return { url: `mqtt://127.0.0.1:${old.port}`, reused: true, stop: async () => stopPid(old.pid) };
  }
  rmSync(info, { force: true });
  const script = join(o.dir, 'bin', 'broker.mjs');
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
  const p = spawnNode({
    script,
    args: [info],
    env: { ...process.env, OPTIMUS_LOCAL_MARKER: o.marker },
    stderrFile: join(o.dir, 'broker.stderr.log'),
  });
  // The broker must outlive a crashed controller: the event loop does not wait for it.
  p.child.unref();
  const deadline = Date.now() + 10_000;
  let started = readInfo(info);
  while (!started) {
    if (Date.now() > deadline || p.child.exitCode !== null)
      throw new Error(`the embedded broker did not start (see ${join(o.dir, 'broker.stderr.log')})`);
    await new Promise((r) => setTimeout(r, 50));
    started = readInfo(info);
  }
  const port = started.port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    reused: false,
    stop: async () => {
      // Unref'd at start so a crash leaves it running; ref'd again so we really wait for it here.
      p.child.ref();
      p.child.kill('SIGTERM');
      await p.exited;
      rmSync(info, { force: true });
    },
  };
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

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 100; i += 1) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
