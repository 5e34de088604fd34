import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
// @ts-expect-error: a plain .mjs script without type declarations
import { buildWeb } from '../../scripts/build-web.mjs';
import type { Config } from '../../src/config.js';
import type { DialectName } from '../../src/db/database.js';
import { DIALECTS, build, signUp, type TestApp, type TestUser } from '../helper.js';
import { putFile, rootFolderId } from './files.js';
import { freePort } from './raw-http.js';

// The web application in a real browser: Debian's chromium driven by playwright-core, against the
// real server listening on a port. Screenshots go to test-results/.

const CHROMIUM = process.env.COFFRE_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = path.resolve('test-results');
const inCi = /^(1|true)$/i.test(process.env.CI ?? '');

/**
 * The databases a browser test runs over: the run's first (SQLite when it has it). The web app is
 * the same over either, and the API tests cover both; test/web/browser.test.ts still walks the
 * main flows over every database of the run, and COFFRE_TEST_BROWSER_DIALECTS=all runs every
 * browser test over each.
 */
export const BROWSER_DIALECTS: DialectName[] = process.env.COFFRE_TEST_BROWSER_DIALECTS === 'all' ? DIALECTS : DIALECTS.slice(0, 1);

// One build of the bundle per test file, into a folder of its own (dist/web is left alone).
const webRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-web-'));
let built: Promise<string> | null = null;
const buildOnce = () => (built ??= buildWeb({ outDir: webRoot, minify: false }));
after(() => fs.rmSync(webRoot, { recursive: true, force: true }));

/** A browser when the Debian chromium is installed; in CI its absence fails the test. */
export async function launch(t: TestContext, extraArgs: string[] = []): Promise<Browser | null> {
  if (!fs.existsSync(CHROMIUM)) {
    assert.ok(!inCi, `${CHROMIUM} is missing: .ci/run installs it (apt-get install -y chromium)`);
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`);
    return null;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
  t.after(() => browser.close());
  return browser;
}

/** A fresh context (no storage shared with the others) whose page fails the test on a CSP violation. */
export async function newPage(
  browser: Browser,
  violations: string[],
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ locale: 'en-US', acceptDownloads: true, viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text());
  });
  page.on('pageerror', (error) => violations.push(`page error: ${error.message}`));
  return { context, page };
}

/** Saves numbered full-page screenshots as test-results/<prefix>-NN-<name>.png. */
export function screenshots(prefix: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  let shot = 0;
  return (page: Page, name: string) =>
    page.screenshot({ path: path.join(SHOTS, `${prefix}-${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

/**
 * The real server serving the built web app on a free port (its public URL on that port), and a
 * browser. With `hostName`, the browser resolves that name to the server (as a LAN name would).
 */
export async function startServer(
  t: TestContext,
  dialect: DialectName,
  config: Partial<Config> = {},
  { hostName }: { hostName?: string } = {},
): Promise<{ browser: Browser; base: string; app: FastifyInstance; test: TestApp } | null> {
  const browser = await launch(t, hostName ? [`--host-resolver-rules=MAP ${hostName} 127.0.0.1`] : []);
  if (!browser) return null;
  const root = await buildOnce();
  const port = await freePort();
  const base = `http://${hostName ?? '127.0.0.1'}:${port}`;
  const test = await build(t, dialect, { webRoot: root, config: { publicUrl: base, ...config } });
  const { app } = test;
  await app.listen({ port, host: '127.0.0.1' });
  return { browser, base, app, test };
}

/**
 * The real server (as startServer) with a first account whose root folder holds `files` (their
 * details as uploaded in `files`), and a fresh page (not yet signed in) whose CSP violations and
 * page errors go to `violations`.
 */
export async function startWithOwner(
  t: TestContext,
  dialect: DialectName,
  files: Record<string, string | Buffer>,
  options: { config?: Partial<Config>; hostName?: string } = {},
): Promise<
  | (Awaited<ReturnType<typeof startServer>> & {
      owner: TestUser;
      root: string;
      files: Record<string, any>;
      page: Page;
      violations: string[];
    })
  | null
> {
  const started = await startServer(t, dialect, options.config, { hostName: options.hostName });
  if (!started) return null;
  const owner = await signUp(started.app);
  const root = await rootFolderId(owner);
  const put: Record<string, any> = {};
  for (const [name, data] of Object.entries(files)) put[name] = await putFile(started.app, owner, root, name, data);
  const violations: string[] = [];
  const { context, page } = await newPage(started.browser, violations);
  t.after(() => context.close());
  return { ...started!, owner, root, files: put, page, violations };
}

/** Signs `page` in with a bearer token (as the app keeps it after a sign-in) and opens `path`. */
export async function openSignedIn(page: Page, base: string, token: string, path: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.evaluate((value: string) => (globalThis as any).localStorage.setItem('coffre.token', value), token);
  await page.goto(`${base}${path}`);
}
