/**
 * A small filesystem that the test can fill to the last byte: a tmpfs mount (CI runs as root), or,
 * where mounting is not allowed, a preload that makes the sidecar's writes under a directory fail
 * with ENOSPC while a flag file exists (the same errors, injected).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface SmallDisk {
  readonly dir: string;
  readonly kind: 'tmpfs' | 'injected';
  /** Node arguments the sidecar needs (the preload when injected). */
  readonly nodeArgs: readonly string[];
  /** Takes every free byte. */
  fill(): void;
  /** Gives the space back. */
  free(): void;
  close(): void;
}

export function smallDisk(root: string, sizeKiB = 128): SmallDisk {
  const dir = join(root, 'small-disk');
  mkdirSync(dir, { recursive: true });
  const filler = join(dir, 'filler');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return injected(root, dir);
  }
  return {
    dir,
    kind: 'tmpfs',
    nodeArgs: [],
    fill: () => {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(4096);
      try {
        for (;;) writeSync(fd, chunk);
      } catch {
        // ENOSPC: full
      }
      try {
        for (;;) writeSync(fd, chunk, 0, 1);
      } catch {
        // the last bytes too
      }
      closeSync(fd);
    },
    free: () => rmSync(filler, { force: true }),
    close: () => {
      try {
        execFileSync('umount', [dir], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    },
  };
}

function injected(root: string, dir: string): SmallDisk {
  const flag = join(root, 'disk-full.flag');
  const preload = join(root, 'inject-enospc.cjs');
  writeFileSync(
    preload,
    `const fs = require('fs');
const dir = ${JSON.stringify(dir)}, flag = ${JSON.stringify(flag)};
const fds = new Set();
const open = fs.openSync;
fs.openSync = function (p, ...rest) { const fd = open.call(fs, p, ...rest); if (String(p).startsWith(dir)) fds.add(fd); return fd; };
const full = () => fs.existsSync(flag);
const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
for (const name of ['writeSync', 'ftruncateSync']) {
  const orig = fs[name];
  fs[name] = function (fd, ...rest) { if (fds.has(fd) && full() && name === 'writeSync') throw enospc(); return orig.call(fs, fd, ...rest); };
}
const wfs = fs.writeFileSync;
fs.writeFileSync = function (p, ...rest) { if (String(p).startsWith(dir) && full()) throw enospc(); return wfs.call(fs, p, ...rest); };
`,
  );
  return {
    dir,
    kind: 'injected',
    nodeArgs: ['--require', preload],
    fill: () => writeFileSync(flag, ''),
    free: () => rmSync(flag, { force: true }),
    close: () => (existsSync(flag) ? rmSync(flag) : undefined),
  };
}
