// Bundles the sidecar into one minified CommonJS file (`sidecar/dist/sidecar.cjs`).
// Exported so tests and the benchmark can build before spawning it: `await buildSidecar()`.
//
// zod is not in the bundle: it costs ~12 MB of resident memory per process. The wire schemas are
// turned into JSON Schemas at build time (from the shared zod schemas, so they cannot drift) and
// embedded; `zod` itself is aliased to a stand-in that absorbs the shared modules' schema building.
import { build } from 'esbuild';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const SIDECAR_BUNDLE = join(here, 'dist', 'sidecar.cjs');
const LIMIT_BYTES = 500 * 1024;

/**
 * Node flags the sidecar runs with (the Dockerfile's ENTRYPOINT repeats them; a test keeps them equal).
 * Measured on this project's workload: young generation capped at 1 MB, one V8 worker thread and no
 * optimising compiler keep resident memory within ~15% of an idle `node`, at no measurable CPU cost
 * at 100 lines/s (the work per line is tiny; TurboFan's code and zones are what cost memory).
 */
export const NODE_FLAGS = ['--max-semi-space-size=1', '--v8-pool-size=1', '--no-opt'];

/** Generates the wire JSON Schemas by bundling and evaluating `emit-wire-schemas.ts` in memory. */
async function wireSchemas() {
  const out = await build({
    stdin: {
      contents: `import { wireSchemasFromZod } from './src/validate/emit-wire-schemas'; module.exports = wireSchemasFromZod();`,
      resolveDir: here,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', out.outputFiles[0].text)(
    module,
    module.exports,
    createRequire(import.meta.url),
  );
  return module.exports;
}

/**
 * The benchmark's stage builds (`bench:sidecar --stage`): the shipped sidecar with its pipeline swapped
 * for `bench/transport-pipeline.ts`, which sends template records (no parsing, validation or
 * serialisation), with or without the outbox write. Never shipped; the bundle goes beside the real one.
 */
export const BENCH_STAGES = {
  full: null,
  transport: { outbox: true },
  'transport-no-outbox': { outbox: false },
};

/** Where a stage's bundle is written (the shipped bundle for `full`). */
export const stageBundle = (stage) =>
  BENCH_STAGES[stage] === null ? SIDECAR_BUNDLE : join(here, 'dist', `sidecar-stage-${stage}.cjs`);

function stagePlugin(stage) {
  const pipeline = join(here, 'bench', 'transport-pipeline.ts');
  return {
    name: 'bench-stage',
    setup(b) {
      b.onResolve({ filter: /^\.\/pipeline$/ }, (args) =>
        args.importer === join(here, 'src', 'sidecar.ts') ? { path: pipeline } : undefined,
      );
    },
  };
}

/**
 * Builds the bundle (or, with a stage other than `full`, a benchmark stage's) and returns its size in
 * bytes; throws if it exceeds 500 KB.
 */
export async function buildSidecar(stage = 'full') {
  if (!(stage in BENCH_STAGES)) throw new Error(`unknown stage "${stage}"`);
  const variant = BENCH_STAGES[stage];
  const outfile = stageBundle(stage);
  const out = await build({
    entryPoints: [join(here, 'src', 'main.ts')],
    outfile,
    write: false,
    bundle: true,
    // OPTIMUS_SIDECAR_NO_MINIFY=1 keeps function names, for CPU profiles (`perf`, `--cpu-prof`).
    minify: process.env.OPTIMUS_SIDECAR_NO_MINIFY !== '1',
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    legalComments: 'none',
    logLevel: 'warning',
    alias: { zod: join(here, 'src', 'validate', 'zod-absent.ts') },
    define: {
      __OPTIMUS_WIRE_SCHEMAS__: JSON.stringify(await wireSchemas()),
      ...(variant === null ? {} : { __OPTIMUS_BENCH_OUTBOX__: String(variant.outbox) }),
    },
    plugins: variant === null ? [] : [stagePlugin(stage)],
  });
  const bundle = out.outputFiles.find((f) => f.path === outfile) ?? out.outputFiles[0];
  const size = bundle.contents.byteLength;
  if (size > LIMIT_BYTES) throw new Error(`sidecar bundle is ${size} bytes, over the ${LIMIT_BYTES} limit`);
  // Write beside, then rename: a process spawning the bundle while another build runs never
  // sees a half-written file.
  mkdirSync(dirname(outfile), { recursive: true });
  const tmp = `${outfile}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, bundle.contents);
  renameSync(tmp, outfile);
  return size;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const size = await buildSidecar();
  process.stdout.write(`built ${SIDECAR_BUNDLE} (${(size / 1024).toFixed(1)} KB)\n`);
}
