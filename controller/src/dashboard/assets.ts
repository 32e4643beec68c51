/**
 * The dashboard's browser assets: one JavaScript and one CSS file bundled with esbuild from
 * `web/` (uPlot included), so the page needs nothing from outside the controller. A checkout
 * builds them in memory on first use (esbuild takes well under a second); the controller bundle of
 * the container image carries them (controller/build.mjs), and `npm run build:dashboard` writes
 * them to `controller/dist/dashboard/` for a Node process without esbuild.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const DASHBOARD_DIST = join(here, '..', '..', 'dist', 'dashboard');

export interface DashboardAssets {
  readonly js: string;
  readonly css: string;
}

/** Bundles `web/main.ts` in memory (esbuild is a build-time dependency, loaded only here). */
export async function buildDashboard(): Promise<DashboardAssets> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [join(here, 'web', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    outdir: 'out',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const file = (ext: string) => out.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { js: file('.js'), css: file('.css') };
}

/** Writes the bundle to `dir` (the container image's build step). */
export async function writeDashboard(dir = DASHBOARD_DIST): Promise<DashboardAssets> {
  const assets = await buildDashboard();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'app.js'), assets.js);
  writeFileSync(join(dir, 'app.css'), assets.css);
  return assets;
}

/** Set by the controller bundle (controller/build.mjs): the assets built with it. */
declare const __OPTIMUS_DASHBOARD__: DashboardAssets | undefined;

let cached: Promise<DashboardAssets> | null = null;

/**
 * A fresh build where esbuild is installed (a checkout: never a stale bundle), else the prebuilt
 * one (the container image ships no build tools); built once per process.
 */
export function dashboardAssets(): Promise<DashboardAssets> {
  cached ??= (async () => {
    if (typeof __OPTIMUS_DASHBOARD__ !== 'undefined') return __OPTIMUS_DASHBOARD__;
    const hasEsbuild = await import('esbuild').then(
      () => true,
      () => false,
    );
    if (hasEsbuild || !existsSync(join(DASHBOARD_DIST, 'app.js'))) return buildDashboard();
    return {
      js: readFileSync(join(DASHBOARD_DIST, 'app.js'), 'utf8'),
      css: readFileSync(join(DASHBOARD_DIST, 'app.css'), 'utf8'),
    };
  })();
  // A failed build is retried on the next request rather than remembered.
  cached.catch(() => (cached = null));
  return cached;
}

/** The page's icon, `/dashboard/favicon.svg` (the page links it: no browser asks for a missing /favicon.ico). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2563eb"/><path d="M4 11V5h2v6zm3 0V3h2v8zm3 0V7h2v4z" fill="#fff"/></svg>
`;

/** The page shell; everything else is drawn by app.js. */
export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Optimus</title>
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="app.css">
</head>
<body>
<a class="skip" href="#main" hidden>Skip to content</a>
<header>
<span class="brand">Optimus</span>
<nav aria-label="Dashboard pages"><a href="#/jobs">Jobs</a><a href="#/cluster">Cluster</a></nav>
<span id="live" role="status" aria-live="polite" data-state="connecting">connecting…</span>
<span id="clock"></span>
</header>
<main id="main" tabindex="-1"></main>
<script src="app.js"></script>
</body>
</html>
`;
