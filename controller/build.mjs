// Bundles the controller image's entry point (`controller/src/cli/kubernetes-main.ts`) into one
// ESM file, `controller/dist/optimus.mjs`, carrying the chart files its commands print (the CRD,
// the RBAC rules): the image has no node_modules and no chart directory. `await buildController()`.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const CONTROLLER_BUNDLE = join(here, 'dist', 'optimus.mjs');
const CHART_FILES = join(here, '..', 'charts', 'optimus', 'files');

/** Every file of charts/optimus/files, by name. */
function chartFiles() {
  return Object.fromEntries(
    readdirSync(CHART_FILES).map((f) => [f, readFileSync(join(CHART_FILES, f), 'utf8')]),
  );
}

/** The dashboard's browser bundle (`controller/src/dashboard/web/`), carried inside the controller. */
async function dashboardAssets() {
  const out = await build({
    entryPoints: [join(here, 'src', 'dashboard', 'web', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    outdir: 'out',
    write: false,
    logLevel: 'warning',
    legalComments: 'none',
  });
  const file = (ext) => out.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { js: file('.js'), css: file('.css') };
}

/** Builds the bundle and returns its size in bytes. */
export async function buildController() {
  const out = await build({
    entryPoints: [join(here, 'src', 'cli', 'kubernetes-main.ts')],
    outfile: CONTROLLER_BUNDLE,
    write: false,
    bundle: true,
    minify: true,
    keepNames: true,
    sourcemap: false,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    legalComments: 'none',
    logLevel: 'warning',
    // CommonJS dependencies call require(); an ESM bundle has to provide it.
    banner: {
      js: "import { createRequire as __optimusRequire } from 'node:module'; const require = __optimusRequire(import.meta.url);",
    },
    define: {
      __OPTIMUS_CHART_FILES__: JSON.stringify(chartFiles()),
      __OPTIMUS_DASHBOARD__: JSON.stringify(await dashboardAssets()),
    },
    // Only a checkout builds the dashboard itself (assets.ts); the bundle carries it prebuilt.
    external: ['esbuild'],
  });
  const bundle = out.outputFiles[0];
  mkdirSync(dirname(CONTROLLER_BUNDLE), { recursive: true });
  // Write beside, then rename: a process starting the bundle never sees half a file.
  const tmp = `${CONTROLLER_BUNDLE}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, bundle.contents);
  renameSync(tmp, CONTROLLER_BUNDLE);
  return bundle.contents.byteLength;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const size = await buildController();
  process.stdout.write(`built ${CONTROLLER_BUNDLE} (${(size / 1024 / 1024).toFixed(1)} MB)\n`);
}
