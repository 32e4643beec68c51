/** Spawns the bundled sidecar for end-to-end tests. */
import { type ChildProcess, spawn } from 'node:child_process';
import { SIDECAR_BUNDLE } from '../../build.mjs';

export interface Running {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `node sidecar.cjs` with `flags`; identity and fast test timings come from `env`. */
export function spawnSidecar(flags: Record<string, string>, env: NodeJS.ProcessEnv = {}): Running {
  const args = [SIDECAR_BUNDLE, ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, v])];
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env['PATH'],
      OPTIMUS_NAMESPACE: 'ml',
      OPTIMUS_ROLE: 'worker',
      OPTIMUS_INDEX: '0',
      OPTIMUS_POLL_MS: '100',
      OPTIMUS_RECONNECT_MIN_MS: '50',
      OPTIMUS_RECONNECT_MAX_MS: '200',
      ...env,
    },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr: () => err, exited };
}
