/**
 * A real browser for the dashboard tests: Debian's Chromium at /usr/bin/chromium, driven by
 * playwright-core (which brings no browser of its own). When Chromium is missing it is installed
 * with apt (the test machines run as root and reach Debian's packages), so the tests never skip.
 * Every console error and uncaught page error is collected, for the tests to assert none.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from './processes.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Screenshots the tests take; git-ignored, kept after the run for people and CI to look at. */
export const artifactsDir = path.join(repoRoot, 'test-artifacts');

function apt(args: string[]): boolean {
  const r = spawnSync('apt-get', args, {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 600_000,
  });
  return r.status === 0;
}

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0)
    throw new Error(`${CHROMIUM} is missing: install it with \`sudo apt-get install -y chromium\``);
  console.log(`${CHROMIUM} is missing: installing Debian's chromium with apt-get`);
  // A fresh machine may have no package lists yet.
  if (
    !apt(['install', '-y', '-qq', 'chromium']) &&
    !(apt(['update', '-qq']) && apt(['install', '-y', '-qq', 'chromium']))
  )
    throw new Error('apt-get install chromium failed');
  if (!existsSync(CHROMIUM)) throw new Error(`apt installed chromium but ${CHROMIUM} is not there`);
  return CHROMIUM;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    // Root in a container: Chromium's sandbox needs user namespaces we may not have.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

export interface WatchedPage {
  page: Page;
  errors: string[];
  screenshot(name: string): Promise<string>;
}

export async function openPage(
  browser: Browser,
  viewport = { width: 1280, height: 860 },
  dir = path.join(artifactsDir, 'ui'),
): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  // Chromium's console names a failed request's status, not its address: keep the address too.
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  mkdirSync(dir, { recursive: true });
  return {
    page,
    errors,
    async screenshot(name) {
      const file = path.join(dir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
  };
}

/**
 * `npm ci` builds the dashboard; the tests build it again (about a second) so that they never run
 * against a build older than the sources.
 */
export function buildDashboard(): void {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'ui', 'build.mjs')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('ui build failed');
}
