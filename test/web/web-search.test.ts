import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { active, axe } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import type { RunningServer } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * Search in the Web UI (issue 36): "/" puts the cursor in the search field, Enter lists results
 * with their chat and a marked excerpt, the count is announced, and opening a result (by keyboard)
 * opens its chat scrolled to the message, marked and focused.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let server: RunningServer;
  let browser: Browser;
  let p: PageRig;
  let target = '';
  let chat = '';

  test.before(async () => {
    try {
      await setUp();
    } catch (err) {
      console.error('web-search set-up failed:', err); // uvu does not print a before hook's error
      throw err;
    }
  });

  async function setUp(): Promise<void> {
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    server = rig.server;
    await finishOnboarding(server.port, 'oa');
    // A long chat (imported, as from another machine): the fact sits near its start, far above
    // the first screen and in a part of the transcript drawn only on demand.
    const messages = Array.from({ length: 80 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: {
        text:
          i === 6
            ? 'The spare key is under the blue flowerpot by the shed.'
            : `Filler message ${i} about nothing in particular.`,
      },
      created_at: new Date(Date.UTC(2026, 10, 1, 10, i)).toISOString(),
    }));
    const imported = await api(server.port, 'POST', '/api/sessions/import', {
      format: 'svc-session',
      version: 1,
      session: { title: 'Garden and house' },
      messages,
    });
    assert.is(imported.status, 201, JSON.stringify(imported.body));
    chat = imported.body.session.id;
    const stored = await api(server.port, 'GET', `/api/sessions/${chat}/messages?limit=200`);
    target = stored.body.items[6].id;
    browser = await launch();
    p = await newPage(browser);
  }

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  test('search by keyboard: "/" focuses the field, results show the chat and the marked words, a result opens the chat at its message', async () => {
    const { page } = p;
    await page.goto(`${server.base}/#/chat`);
    await page.locator('[data-testid=search-input]').waitFor();
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('/');
    assert.is(await active(page), 'INPUT[search-input] Search all chats');
    await page.keyboard.type('flowerpot');
    await page.keyboard.press('Enter');

    const status = page.locator('[data-testid=search-status]');
    await page.getByText('1 result.').waitFor();
    assert.is(await status.getAttribute('role'), 'status');
    const result = page.locator('[data-testid=search-result]');
    assert.is(await result.count(), 1);
    assert.match(await result.innerText(), /Garden and house/);
    assert.is(await result.locator('mark').innerText(), 'flowerpot');
    assert.equal(await axe(page, 'search results'), []);

    // Ctrl+K from anywhere also reaches the field.
    await page.locator('h1').focus();
    await page.keyboard.press('Control+k');
    assert.match(await active(page), /^INPUT\[search-input\]/);

    // To the result by Tab, and open it with Enter.
    await result.focus();
    await page.keyboard.press('Enter');
    const found = page.locator(`[data-message-id="${target}"]`);
    await page.locator('.msg-item.found').waitFor();
    assert.is(await found.getAttribute('class'), 'msg-item found');
    assert.match(await found.innerText(), /blue flowerpot/);
    assert.ok(
      (await page.evaluate(
        "document.activeElement && document.activeElement.getAttribute('data-message-id')",
      )) === target,
      'the marked message has focus, so a screen reader reads it',
    );
    const box = await page.locator('[data-testid=transcript]').boundingBox();
    const at = await found.boundingBox();
    assert.ok(box && at, 'both are laid out');
    assert.ok(
      at.y >= box.y && at.y + at.height <= box.y + box.height,
      `the message is in view: ${JSON.stringify({ box, at })}`,
    );
    assert.match(page.url(), new RegExp(`#/chat/${chat}/${target}$`));
    assert.equal(p.errors, []);
  });

  test('a search with nothing to find and one with no words say so', async () => {
    const { page } = p;
    await page.goto(`${server.base}/#/search/${encodeURIComponent('zyxwvut')}`);
    await page.getByText('Nothing found.').waitFor();
    await page.goto(`${server.base}/#/search/${encodeURIComponent('🎉')}`);
    await page.getByText(/The search failed: .*no words to look for/).waitFor();
  });

  test.run();
}
