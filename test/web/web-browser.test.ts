import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser } from 'playwright-core';
import { axe } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { startDebugChromium, type DebugChromium } from '../helpers/cdp-chromium.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/**
 * The Browser page in headless Chromium: the status says why nothing is connected; Verify with
 * the port of a Chromium the test started connects and saves it; a recording typed with a YAML
 * error shows the error with its line, is saved once fixed, lists its steps, replays into a new
 * chat (the agent is asked to run browser_replay), and is deleted to the trash.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let chrome: DebugChromium;

  test.before(async () => {
    chrome = await startDebugChromium('about:blank');
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
    await p.page.goto(`${rig.server.base}/#/chat`);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    await chrome?.stop();
  });

  test('the nav leads to the Browser page; not connected, with the fix; Verify with the port connects and saves it', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Browser', exact: true }).click();
    await page.getByRole('heading', { name: 'Browser', exact: true }).waitFor();
    const conn = page.getByTestId('browser-connection');
    await conn.getByText('not connected').waitFor();
    assert.match(await conn.innerText(), /--remote-debugging-port=9222/);
    // The page offers buttons and fields, never an API call or a config file to edit.
    const card = page.getByTestId('browser-status');
    assert.not.match(await card.innerText(), /POST |\/api\/|config\.yml/);
    await card.getByRole('button', { name: 'Start a headless Chromium for me' }).waitFor();
    assert.equal(await axe(page, 'browser page'), []);
    await page
      .getByLabel('DevTools port')
      .fill(String(chrome.port + 1 === 65536 ? 1 : chrome.port + 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page
      .getByTestId('verify-result')
      .getByText(/nothing listens on|did not answer|no answer/)
      .waitFor();
    await page.getByLabel('DevTools port').fill(String(chrome.port));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page
      .getByTestId('verify-result')
      .getByText(/Connected to .*saved as the browser to use/)
      .waitFor();
    await conn.getByText('connected', { exact: true }).waitFor();
    assert.match(await conn.innerText(), new RegExp(`at 127\\.0\\.0\\.1:${chrome.port}`));
  });

  test('a recording with a YAML error shows it on its line; fixed, it is saved and lists its steps', async () => {
    const { page } = p;
    await page.getByRole('button', { name: 'New recording' }).click();
    const editor = page.getByTestId('recording-editor');
    await editor.getByLabel('Name').fill('greet');
    await editor
      .getByLabel('YAML')
      .fill(
        'description: Greets\nsteps:\n  - action: navigate\n    value: https://example.com/\n  - action: fly\n',
      );
    await editor.getByRole('button', { name: 'Save' }).click();
    const issues = page.getByTestId('recording-issues');
    await issues.waitFor();
    assert.match(await issues.innerText(), /Line 5, column \d+: step 2, action: unknown action/);
    await issues.getByRole('button', { name: /Line 5/ }).click();
    const selected = await editor.getByLabel('YAML').evaluate((el) => {
      const t = el as unknown as { value: string; selectionStart: number; selectionEnd: number };
      return t.value.slice(t.selectionStart, t.selectionEnd);
    });
    assert.is(selected, '  - action: fly', 'the caret goes to the line');
    await editor
      .getByLabel('YAML')
      .fill(
        'description: Greets\nparams:\n  - name: who\n    default: World\nsteps:\n  - action: navigate\n    value: https://example.com/\n  - action: type\n    target: "#name"\n    value: "{{who}}"\n',
      );
    await editor.getByRole('button', { name: 'Save' }).click();
    const card = page.locator('[data-testid="recording"][data-name="greet"]');
    await card.waitFor();
    assert.match(await card.innerText(), /2 steps/);
    await card.getByText('Steps', { exact: true }).click();
    await card.getByTestId('recording-steps').getByText('#name').waitFor();
    assert.ok(existsSync(join(rig.server.home, 'browser', 'recordings', 'greet.yml')));
  });

  test('Replay in a new chat opens a chat that asks the agent to replay it with the params given', async () => {
    const { page } = p;
    const card = page.locator('[data-testid="recording"][data-name="greet"]');
    await card.getByLabel('who').fill('Ada');
    await card.getByRole('button', { name: 'Replay in a new chat' }).click();
    await page.waitForURL(/#\/chat\/s_[a-z0-9]{21}$/);
    await page
      .getByText(
        'Replay the browser recording "greet" with the browser_replay tool, params {"who":"Ada"}',
      )
      .waitFor();
  });

  test('Delete moves the recording to the trash', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Browser', exact: true }).click();
    const card = page.locator('[data-testid="recording"][data-name="greet"]');
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No recording yet').waitFor();
    const trash = await api(rig.port, 'GET', '/api/trash');
    assert.ok(trash.body.items.some((i: { name: string }) => i.name === 'greet.yml'));
    assert.equal(p.errors, []);
  });

  test('Start a headless Chromium for me: svc launches its own and the page says it is connected', async () => {
    const { page } = p;
    const conn = page.getByTestId('browser-connection');
    await page.getByRole('button', { name: 'Start a headless Chromium for me' }).click();
    await conn.getByText('(started by svc)').waitFor({ timeout: 60_000 });
    await conn.getByText('connected', { exact: true }).waitFor();
    const status = (await api(rig.port, 'GET', '/api/browser/status')).body;
    assert.is(status.mode, 'launch');
    assert.is(
      await page.getByRole('button', { name: 'Start a headless Chromium for me' }).count(),
      0,
    );
    const bad = await api(rig.port, 'POST', '/api/browser/launch', { executable: '/bin/sh' });
    assert.is(bad.status, 400, 'the launch route takes no fields');
    assert.equal(p.errors, []);
  });
}

test.run();
