/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (DOM types: the page.evaluate callbacks of this file run in the browser.)
/**
 * A real browser for the dashboard tests: Debian's chromium driven by playwright-core, with the
 * flags this closed network needs (no background networking, component updates or sync, which
 * would otherwise try to reach the outside and stall) and a fresh profile per launch.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env['OPTIMUS_TEST_CHROMIUM'] ?? '/usr/bin/chromium';
export const hasChromium = (): boolean => existsSync(CHROMIUM);

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  // playwright passes the profile directory itself (it refuses --user-data-dir in the args).
  const profile = mkdtempSync(join(tmpdir(), 'optimus-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1366, height: 900 },
  });
  return {
    context,
    newPage: async (viewport) => {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * How many distinct colours a PNG shows, decoded by the browser itself (no image library needed).
 * A blank or single-colour screenshot has 1–2; a page with text, tables and charts has hundreds.
 */
export async function distinctColours(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < data.length; i += 4) seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    return seen.size;
  }, png.toString('base64'));
}
