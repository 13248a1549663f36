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
import { skipFile } from '../helpers/skip.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/*
 * The Usage page (issue 33): a chart per day drawn by uPlot, the same numbers in a table, the
 * budgets with what they spent, and the top sessions with their cost, after real turns.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let session = '';

  test.before(async () => {
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    const prices = await api(rig.port, 'PATCH', '/api/config/models/oa', {
      prices: { input: 2, output: 8 },
    });
    assert.is(prices.status, 200);
    await api(rig.port, 'PUT', '/api/budgets', { daily: { usd: 10 } });
    session = (await api(rig.port, 'POST', '/api/chat', {})).body.session_id;
    // 100k input and 10k output tokens: $0.20 + $0.08.
    rig.fake.enqueue({
      parts: [{ text: 'Costly answer' }],
      usage: { input: 100_000, output: 10_000 },
    });
    const r = await api(rig.port, 'POST', `/api/chat/${session}/turn`, { message: 'hi' });
    assert.is(r.body.status, 'completed', JSON.stringify(r.body));
    browser = await launch();
    p = await newPage(browser);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  test('the Usage page charts the days, lists the budgets and the top sessions, and passes axe', async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/usage`);
    await page.getByTestId('usage-chart').locator('canvas').waitFor();
    assert.is(await page.getByTestId('usage-cost').innerText(), '$0.28');
    const top = page.getByTestId('usage-session').first();
    assert.match(await top.innerText(), session);
    assert.match(await top.innerText(), '$0.28');
    const budget = page.getByTestId('budget-state').first();
    assert.match(await budget.innerText(), 'daily');
    assert.match(await budget.innerText(), '$0.28 of $10.00');
    // Keyboard: the day table is reachable and named for screen readers.
    const days = page.getByRole('region', { name: 'Usage per day' });
    await days.focus();
    assert.match(await active(page), 'Usage per day');
    assert.equal(await axe(page, 'usage'), []);
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await axe(page, 'usage (dark)'), []);
    await page.setViewportSize({ width: 390, height: 780 });
    await page.reload();
    await page.getByTestId('usage-chart').locator('canvas').waitFor();
    assert.equal(await axe(page, 'usage (dark, phone)'), []);
    assert.equal(p.errors, [], 'no errors in the page');
  });

  test.run();
}
