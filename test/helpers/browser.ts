import { existsSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { api } from './api.js';
import { repoRoot, SLACK } from './server.js';

/**
 * Headless Chromium (Debian's package) driven by playwright-core, for the Web UI tests. Tests
 * print a reason and skip when the browser is not installed; .ci/run installs it when root.
 */
export const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Playwright's bound on each step (a click waiting for its element, a launch): 15 s on a quiet
 * machine, stretched by SLACK like every other wait, since a fixed 30 s ran out once on a
 * loaded one. A passing step never waits for it. Tests leave it alone; a step that needs more
 * than one (an upgrade's download) asks for a multiple of it.
 */
export const STEP_MS = 15_000 * SLACK;

export function browserUnavailable(): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `${CHROMIUM} is not installed (apt-get install chromium)`;
}

/** Launches Chromium; `netns` runs it inside a network namespace (through a tiny wrapper script). */
export async function launch(opts: { netns?: string; home?: string } = {}): Promise<Browser> {
  let executablePath = CHROMIUM;
  if (opts.netns) {
    // playwright talks to the browser over inherited pipes, which `ip netns exec` keeps.
    executablePath = join(opts.home ?? '/tmp', `chromium-in-${opts.netns}.sh`);
    writeFileSync(executablePath, `#!/bin/sh\nexec ip netns exec ${opts.netns} ${CHROMIUM} "$@"\n`);
    chmodSync(executablePath, 0o755);
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: STEP_MS });
}

export interface PageRig {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors, for assertions and failure messages. */
  errors: string[];
  close: () => Promise<void>;
}

/** A fresh context (its own cookies) and page; `confirm()` dialogs are accepted. */
export async function newPage(
  browser: Browser,
  opts: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<PageRig> {
  const context = await browser.newContext({
    viewport: opts.viewport ?? { width: 1200, height: 800 },
    colorScheme: opts.colorScheme ?? 'light',
  });
  context.setDefaultTimeout(STEP_MS);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // A 4xx answer the app expects (a session without a goal is a 404) is logged by Chromium too.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource'))
      errors.push(`console: ${msg.text()}`);
  });
  page.on('dialog', (d) => void d.accept());
  return { context, page, errors, close: () => context.close() };
}

/**
 * Signs the page's browser in the way a person does once (the address `svc key show` prints): the
 * key becomes the cookie, which answering approvals needs even on loopback.
 */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/?access_key=${encodeURIComponent(key)}`);
}

/** The visible text of the transcript's assistant messages (committed and live). */
export async function assistantTexts(page: Page): Promise<string[]> {
  return page.locator('[data-testid="assistant-message"] .md').allInnerTexts();
}

/** Tests the default model and completes onboarding over the API, so the page opens on the chat. */
export async function finishOnboarding(port: number, modelId: string): Promise<void> {
  const t = await api(port, 'POST', '/api/config/test', { model_id: modelId });
  if (t.status !== 200 || t.body.ok !== true)
    throw new Error(`the model test failed: ${JSON.stringify(t.body)}`);
  const done = await api(port, 'POST', '/api/onboard/complete', {});
  if (done.status !== 200)
    throw new Error(`onboarding did not complete: ${JSON.stringify(done.body)}`);
}

/**
 * Where a screenshot goes: docs/images/<name> when SVC_WEB_SCREENSHOTS=1 (to refresh the docs'
 * pictures), else a temp file, so a test run leaves the work tree as it was.
 */
export function screenshotPath(name: string): string {
  return process.env.SVC_WEB_SCREENSHOTS === '1'
    ? join(repoRoot, 'docs', 'images', name)
    : join(tmpdir(), `svc-web-${name}`);
}
