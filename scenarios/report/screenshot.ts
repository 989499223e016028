// Renders a report to PNG in headless Chromium (the system's, driven by playwright-core; nothing is downloaded):
//   node --import tsx scenarios/report/screenshot.ts reports/<file>.html [out.png] [width]
// Needs `chromium` (Debian: apt-get install -y chromium); CHROMIUM=/path overrides where it is looked for.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';

const candidates = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium executable, or undefined when none is installed. */
export function findChromium(): string | undefined {
  const override = process.env.CHROMIUM;
  if (override) return existsSync(override) ? override : undefined;
  return candidates.find((path) => existsSync(path));
}

/** Launches Chromium headless, with no network of its own (no background connections, no updates). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('chromium not found: apt-get install -y chromium (or set CHROMIUM)');
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Opens the report file and writes a full-page PNG of it. */
export async function screenshot(htmlPath: string, pngPath: string, width = 1240): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
    await page.goto(pathToFileURL(resolve(htmlPath)).href);
    await page.screenshot({ path: pngPath, fullPage: true });
  } finally {
    await browser.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [html, png = html?.replace(/\.html$/, '.png'), width] = process.argv.slice(2);
  if (!html || !png) {
    console.error('usage: screenshot.ts <report.html> [out.png] [width]');
    process.exitCode = 2;
  } else {
    await screenshot(html, png, width ? Number(width) : undefined);
    console.log(png);
  }
}
